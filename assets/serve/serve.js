// sim serve's playground: two panes, each a scenario with controls, whose
// every change runs the simulator on this machine (POST /api/run) and draws
// the result with the report's charts (RetryStorm.render).
(function () {
  'use strict';
  const post = async (path, body) => {
    const r = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body) });
    return r.json();
  };
  const el = (tag, attrs = {}, text) => {
    const e = document.createElement(tag);
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    if (text != null) e.textContent = text;
    return e;
  };
  // A control's value as a TOML value: numbers as they are, the rest quoted.
  const literal = (kind, v) => {
    if (v.trim() === '') return '';
    if (kind === 'number') return v.trim();
    if (kind === 'retries') return /^\d+$/.test(v.trim()) ? v.trim() : JSON.stringify(v.trim());
    if (kind === 'budget') return `{ kind = ${JSON.stringify(v)} }`;
    if (kind === 'breaker' || kind === 'switch') return v === 'on' ? '{}' : '';
    if (kind === 'limiter') return v === 'none' ? '' : `{ kind = ${JSON.stringify(v)} }`;
    if (kind === 'bool') return v === 'true' ? 'true' : 'false';
    return JSON.stringify(v.trim());
  };

  let scenarios = [];
  const panes = [];

  class Pane {
    constructor(id) {
      this.id = id;
      this.edits = new Map();
      this.seq = 0;
      this.plots = [];
      const p = id + '-';
      this.root = el('section', { class: 'pane', id: 'pane-' + id, 'aria-label': 'configuration ' + id.toUpperCase() });
      this.root.innerHTML = `
        <h2>Configuration ${id.toUpperCase()}</h2>
        <div class="bar">
          <label>Scenario <select class="scenario"></select></label>
          <label>or your file <input type="file" class="file" accept=".toml"></label>
          <button type="button" class="export">export TOML</button>
          <button type="button" class="reset">undo changes</button>
          <span class="status" aria-live="polite"></span>
        </div>
        <p class="description"></p>
        <div class="pane-body">
          <details class="controls" open>
            <summary>Parameters <span class="hint">(click to hide them and see the charts)</span></summary>
            <p class="hint">Changed from the file: <span class="changed-key">marked so</span>.
              <span class="b-only">Different from A: <span class="differs-key">marked so</span>.</span></p>
            <form class="fields" autocomplete="off"></form>
            <div class="problem" role="alert"></div>
            <div class="notes"></div>
          </details>
          <div class="results">
            <div class="takeaway-box"></div>
            <h3>Summary</h3><div class="table"></div>
            <div class="toggles" id="${p}toggles"></div>
            <div class="chart" id="${p}chart-load"></div>
            <div class="chart" id="${p}chart-goodput"></div>
            <div class="chart" id="${p}chart-backlog"></div>
            <div class="chart" id="${p}chart-fleet"></div>
            <div class="chart" id="${p}chart-tiers"></div>
          </div>
        </div>`;
      this.q = (s) => this.root.querySelector(s);
      const select = this.q('.scenario');
      // Shown while a file of the user's is open.
      select.appendChild(el('option', { value: '', disabled: '', hidden: '' }, 'your file'));
      // A sweep runs at the values its file writes (one point).
      scenarios.forEach((s) => select.appendChild(el('option', { value: s.name }, s.sweep ? s.name + ' (one point of a sweep)' : s.name)));
      select.addEventListener('change', () => this.load(select.value));
      this.q('.file').addEventListener('change', async (e) => {
        const f = e.target.files[0];
        if (!f) return;
        this.file = f.name;
        this.name = f.name.replace(/\.toml$/i, '');
        this.q('.scenario').value = '';
        this.text = await f.text();
        this.edits.clear();
        this.q('.description').textContent = 'your file ' + f.name;
        // Nothing of the scenario shown before stays beside the new file.
        this.clearResults();
        this.q('.fields').innerHTML = '';
        await this.refresh();
      });
      this.q('.export').addEventListener('click', () => this.export());
      this.q('.reset').addEventListener('click', () => { this.edits.clear(); this.refresh(); });
      document.getElementById('panes').appendChild(this.root);
    }

    async load(name, edits = []) {
      const s = scenarios.find((x) => x.name === name);
      this.q('.scenario').value = name;
      this.name = name;
      this.file = `scenarios/${name}.toml`;
      this.text = s.text;
      this.edits = new Map(edits);
      this.q('.description').textContent = s.description;
      await this.refresh();
    }

    // B as a copy of `other`, with `extra` edits on top (a setting of the
    // advice's front).
    copyFrom(other, extra = []) {
      this.name = other.name;
      this.file = other.file;
      this.text = other.text;
      this.edits = new Map(other.edits);
      extra.forEach(([k, v]) => this.edits.set(k, v));
      if (other.name) this.q('.scenario').value = other.name;
      this.q('.description').textContent = other.q('.description').textContent;
      return this.refresh();
    }

    request() {
      return { text: this.text, file: this.file, edits: Array.from(this.edits.entries()) };
    }

    // New controls for the (edited) scenario, then a run. A file that cannot
    // be read leaves no results of another one on the page.
    async refresh() {
      const r = await post('/api/fields', this.request());
      if (!r.ok) { this.clearResults(); this.showError(r); return; }
      this.renderFields(r.fields);
      markDifferences();
      await this.run();
    }

    // Forgets the last run's table and charts (a new file, or one that fails).
    clearResults() {
      this.plots.forEach(({ u }) => u.destroy());
      this.plots = [];
      this.drawn = null;
      this.summary = null;
      this.q('.table').innerHTML = '';
      this.q('.takeaway-box').innerHTML = '';
      ['toggles', 'chart-load', 'chart-goodput', 'chart-backlog', 'chart-fleet', 'chart-tiers'].forEach((c) => {
        this.q('#' + this.id + '-' + c).innerHTML = '';
      });
      this.root.classList.remove('stale');
    }

    renderFields(fields) {
      const form = this.q('.fields');
      form.innerHTML = '';
      const groups = new Map();
      for (const f of fields) {
        if (!groups.has(f.group)) {
          const fs = el('fieldset');
          fs.appendChild(el('legend', {}, f.group));
          groups.set(f.group, fs);
          form.appendChild(fs);
        }
        const row = el('div', { class: 'field', 'data-key': f.key, title: f.help });
        if (this.edits.has(f.key)) row.classList.add('changed');
        const id = `${this.id}-${f.key.replace(/[^a-z0-9]/gi, '-')}`;
        row.appendChild(el('label', { for: id }, f.label));
        let input;
        if (f.options.length) {
          input = el('select', { id, name: f.key });
          const opts = f.options.includes(f.value) ? f.options : [f.value].concat(f.options);
          opts.forEach((o) => input.appendChild(el('option', { value: o }, o)));
          input.value = f.value;
        } else {
          input = el('input', { id, name: f.key, value: f.value, inputmode: f.kind === 'number' ? 'decimal' : 'text' });
        }
        input.dataset.kind = f.kind;
        input.addEventListener('change', () => {
          this.edits.set(f.key, literal(f.kind, input.value));
          row.classList.add('changed');
          markDifferences();
          this.run();
        });
        row.appendChild(input);
        groups.get(f.group).appendChild(row);
      }
    }

    clearErrors() {
      this.q('.problem').textContent = '';
      this.root.querySelectorAll('.field.invalid').forEach((r) => {
        r.classList.remove('invalid');
        const m = r.querySelector('.error');
        if (m) m.remove();
      });
    }

    // The message of the CLI, at the field it names when the page has one.
    showError(r) {
      this.clearErrors();
      this.q('.controls').open = true; // the message is among the controls
      this.setStatus('');
      const row = r.key && this.root.querySelector(`.field[data-key="${CSS.escape(r.key)}"]`);
      if (row) {
        row.classList.add('invalid');
        row.appendChild(el('div', { class: 'error', role: 'alert' }, r.error));
        row.querySelector('input, select').setAttribute('aria-invalid', 'true');
      } else {
        this.q('.problem').textContent = r.error;
      }
    }

    setStatus(text, busy = false) {
      const s = this.q('.status');
      s.textContent = text;
      s.classList.toggle('busy', busy);
    }

    async run() {
      const seq = ++this.seq;
      const started = performance.now();
      this.setStatus('', true);
      let r;
      try {
        r = await post('/api/run', this.request());
      } catch (e) {
        r = { ok: false, error: 'the playground server does not answer: is sim serve still running? ' + e };
      }
      if (seq !== this.seq) return; // a newer run has started
      if (!r.ok) {
        // The charts shown are of the last good run, not of these values.
        this.root.classList.add('stale');
        this.showError(r);
        return;
      }
      this.clearErrors();
      this.clearResults();
      this.toml = r.toml;
      this.summary = r.summary_csv;
      this.timeseries = r.timeseries_csv;
      this.facts = r.facts;
      this.q('.table').innerHTML = r.table;
      this.noteWideTable();
      this.q('.takeaway-box').innerHTML = r.takeaway;
      this.q('.notes').textContent = r.notes.join(' ');
      const drawn = window.RetryStorm.render({
        facts: r.facts,
        data: { summary: r.summary_csv, timeseries: r.timeseries_csv },
        root: this.root,
        prefix: this.id + '-',
      });
      this.plots = drawn.plots;
      this.drawn = drawn;
      shareScales();
      const shownMs = Math.round(performance.now() - started);
      this.root.dataset.runs = (+(this.root.dataset.runs || 0) + 1).toString();
      this.root.dataset.lastMs = shownMs;
      this.setStatus(`ran in ${r.run_ms} ms, shown in ${shownMs} ms`);
      if (this.onRun) this.onRun();
    }

    // Says, under a summary wider than the pane, that more columns are to
    // the right (scrollbars may be hidden until used).
    noteWideTable() {
      const box = this.q('.table');
      const wide = box.querySelector('.wide') || box;
      const old = box.querySelector('.more-columns');
      if (old) old.remove();
      if (wide.scrollWidth > wide.clientWidth + 1) {
        box.appendChild(el('p', { class: 'more-columns' }, 'More columns to the right: scroll the table sideways.'));
      }
    }

    export() {
      const text = this.toml || this.text;
      const blob = new Blob([text], { type: 'application/toml' });
      // The server renames the export NAME-edited, so that `sim run` on it
      // writes results of its own; the file is named the same.
      const named = /^name\s*=\s*"([^"]+)"/m.exec(text);
      const file = named ? named[1] : (this.name || 'scenario') + '-edited';
      const a = el('a', { href: URL.createObjectURL(blob), download: file + '.toml' });
      document.body.appendChild(a);
      a.click();
      a.remove();
    }
  }

  const both = () => panes.length === 2 && !panes[1].root.hidden;

  // A and B on the same scales, figure by figure, so that their charts can be
  // compared by eye; each on its own when B is hidden.
  function shareScales() {
    panes.forEach((p) => p.noteWideTable());
    const drawn = panes.filter((p, i) => p.drawn && (i === 0 || both())).map((p) => p.drawn);
    const max = {};
    drawn.forEach((d) => Object.entries(d.yMax).forEach(([k, v]) => { max[k] = Math.max(max[k] || 0, v); }));
    drawn.forEach((d) => d.setYMax(both() ? max : d.yMax));
  }

  // Marks, in each pane, the fields whose value differs from the other's.
  function markDifferences() {
    const value = (pane, key) => {
      const f = pane.root.querySelector(`.field[data-key="${CSS.escape(key)}"] input, .field[data-key="${CSS.escape(key)}"] select`);
      return f ? f.value : null;
    };
    panes.forEach((p, i) => {
      const other = panes[1 - i];
      p.root.querySelectorAll('.field').forEach((row) => {
        const differs = both() && other && value(other, row.dataset.key) !== value(p, row.dataset.key);
        row.classList.toggle('differs', !!differs);
      });
    });
  }

  // B: shown or hidden; made from A the first time.
  async function showB(on, setup) {
    const toggle = document.getElementById('show-b');
    toggle.setAttribute('aria-pressed', on ? 'true' : 'false');
    document.getElementById('panes').classList.toggle('two', on);
    if (on && panes.length < 2) {
      const b = new Pane('b');
      b.onRun = showFigures;
      panes.push(b);
      await (setup ? setup(b) : b.copyFrom(panes[0]));
    } else if (panes[1]) {
      panes[1].root.hidden = !on;
      if (on) await (setup ? setup(panes[1]) : panes[1].run());
    }
    panes.forEach((p) => p.plots.forEach(({ u }) => {
      if (!u.root.isConnected) return;
      const w = u.root.parentElement.clientWidth;
      if (w > 0) u.setSize({ width: Math.max(280, w), height: u.height });
    }));
    markDifferences();
    shareScales();
  }

  // ----------------------------------------------------------------- advice
  // POST /api/advise searches settings for A's scenario; the finalists are
  // drawn as failed requests against peak load (an SVG: a few dozen points),
  // the front numbered as `sim advise` prints it, the pick ringed, the
  // objective's peak limit dashed. A front point loads its setting into B.
  const SVG = 'http://www.w3.org/2000/svg';
  const svg = (tag, attrs = {}, text) => {
    const e = document.createElementNS(SVG, tag);
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    if (text != null) e.textContent = text;
    return e;
  };
  const fmt = (v, digits) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(digits));
  const ticks = (max) => {
    const step = Math.pow(10, Math.floor(Math.log10(max / 4)));
    const s = [1, 2, 5, 10].map((m) => m * step).find((x) => max / x <= 6) || step * 10;
    const out = [];
    for (let v = 0; v <= max + 1e-9; v += s) out.push(v);
    return out;
  };
  async function loadIntoB(point) {
    // Its first strategy takes the setting, and its number as a name.
    const edits = point.edits.concat([['strategy[0].name', `"advised-${point.label}"`]]);
    await showB(true, (b) => b.copyFrom(panes[0], edits));
    document.getElementById('pane-b').scrollIntoView({ block: 'start' });
  }
  function drawFront(r) {
    const box = document.getElementById('advise-chart');
    box.innerHTML = '';
    const W = 720, H = 340, L = 70, R = 20, T = 20, B = 50;
    const pts = r.points;
    const xmax = Math.max(...pts.map((p) => p.peak_load_ratio), r.peak_limit || 0) * 1.1 || 1;
    const ymax = Math.max(...pts.map((p) => p.failed)) * 1.1 || 1;
    const x = (v) => L + (v / xmax) * (W - L - R);
    const y = (v) => H - B - (v / ymax) * (H - T - B);
    const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img',
      'aria-label': `the ${pts.length} finalists: requests failed against peak load` });
    ticks(xmax).forEach((v) => {
      root.appendChild(svg('line', { x1: x(v), x2: x(v), y1: T, y2: H - B, class: 'grid' }));
      root.appendChild(svg('text', { x: x(v), y: H - B + 16, 'text-anchor': 'middle' }, fmt(v, 1)));
    });
    ticks(ymax).forEach((v) => {
      root.appendChild(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
      root.appendChild(svg('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmt(v, 0)));
    });
    root.appendChild(svg('text', { x: (L + W - R) / 2, y: H - 10, 'text-anchor': 'middle' },
      'peak load / capacity (mean of the worlds)'));
    root.appendChild(svg('text', { x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle',
      transform: `rotate(-90 14 ${(T + H - B) / 2})` }, 'requests failed (mean)'));
    if (r.peak_limit != null) {
      root.appendChild(svg('line', { x1: x(r.peak_limit), x2: x(r.peak_limit), y1: T, y2: H - B, class: 'limit' }));
      root.appendChild(svg('text', { x: x(r.peak_limit) + 4, y: T + 12 }, `limit ${r.peak_limit}`));
    }
    // Settings with the same figures share one point; the front's on top.
    const order = pts.map((p, i) => i).sort((a, b) => (pts[a].label != null) - (pts[b].label != null));
    order.forEach((i) => {
      const p = pts[i];
      const title = `${p.label != null ? '#' + p.label + ' ' : ''}${p.settings.join('\n')}\nfailed ${fmt(p.failed, 1)}, ` +
        `successes lost ${fmt(p.successes_lost, 1)}, peak ${p.peak_load_ratio.toFixed(2)}, p99 ${p.latency_p99_s.toFixed(3)} s`;
      if (p.label == null) {
        const c = svg('circle', { cx: x(p.peak_load_ratio), cy: y(p.failed), r: 3, class: 'beaten' });
        c.appendChild(svg('title', {}, title));
        root.appendChild(c);
        return;
      }
      const g = svg('g', { class: 'front-point', 'data-label': p.label, tabindex: 0, role: 'button',
        'aria-label': `load setting ${p.label} into B` });
      g.appendChild(svg('title', {}, title + '\nclick to load it into B'));
      // A target larger than the dot, so that it is easy to hit.
      g.appendChild(svg('circle', { cx: x(p.peak_load_ratio), cy: y(p.failed), r: 12, class: 'hit' }));
      if (p.pick) g.appendChild(svg('circle', { cx: x(p.peak_load_ratio), cy: y(p.failed), r: 9, class: 'pick' }));
      g.appendChild(svg('circle', { cx: x(p.peak_load_ratio), cy: y(p.failed), r: 5, class: 'front' }));
      g.appendChild(svg('text', { x: x(p.peak_load_ratio) + 8, y: y(p.failed) - 6 }, String(p.label)));
      g.addEventListener('click', () => loadIntoB(p));
      g.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') loadIntoB(p); });
      root.appendChild(g);
    });
    box.appendChild(root);
  }
  function frontTable(r) {
    const box = document.getElementById('advise-table');
    box.innerHTML = '';
    const table = el('table');
    const head = el('tr');
    ['#', 'setting (backoff, base, cap, retries, timeout, budget)', 'failed', 'successes lost', 'peak load', 'p99 (s)', '']
      .forEach((h) => head.appendChild(el('th', {}, h)));
    table.appendChild(el('thead')).appendChild(head);
    const body = table.appendChild(el('tbody'));
    r.points.filter((p) => p.label != null).sort((a, b) => a.label - b.label).forEach((p) => {
      const row = el('tr', { 'data-label': p.label });
      if (p.pick) row.classList.add('pick');
      row.appendChild(el('td', {}, (p.pick ? '* ' : '') + p.label));
      const s = el('td', { class: 'setting' });
      p.settings.forEach((line) => s.appendChild(el('div', {}, line)));
      row.appendChild(s);
      [fmt(p.failed, 1), fmt(p.successes_lost, 1), p.peak_load_ratio.toFixed(2), p.latency_p99_s.toFixed(3)]
        .forEach((v) => row.appendChild(el('td', { class: 'num' }, v)));
      const go = el('button', { type: 'button', class: 'load-b' }, 'load into B');
      go.addEventListener('click', () => loadIntoB(p));
      row.appendChild(el('td')).appendChild(go);
      body.appendChild(row);
    });
    box.appendChild(table);
    const picked = r.points.find((p) => p.pick);
    box.appendChild(el('p', { class: 'hint' }, `${r.points.length} finalists of ${r.drawn} settings drawn, ` +
      `${r.runs} runs; the other settings are strategy "${r.template}"'s. ` +
      (picked ? `The objective picks #${picked.label} (*).` : 'No setting on the front keeps every limit.')));
  }
  async function searchSettings() {
    const status = document.getElementById('advise-status');
    const problem = document.getElementById('advise-problem');
    problem.textContent = '';
    status.textContent = '';
    status.classList.add('busy');
    const body = Object.assign(panes[0].request(), {
      runs: +document.getElementById('advise-runs').value,
      objective: document.getElementById('advise-objective').value,
    });
    let r;
    try {
      r = await post('/api/advise', body);
    } catch (e) {
      r = { ok: false, error: 'the playground server does not answer: is sim serve still running? ' + e };
    }
    status.classList.remove('busy');
    if (!r.ok) {
      status.textContent = '';
      problem.textContent = r.error;
      return;
    }
    status.textContent = `searched in ${(r.run_ms / 1000).toFixed(1)} s`;
    drawFront(r);
    frontTable(r);
    const section = document.getElementById('advise');
    section.dataset.searches = (+(section.dataset.searches || 0) + 1).toString();
  }

  // ---------------------------------------------------------------- lessons
  const lessons = JSON.parse(document.getElementById('lessons-data').textContent);
  let current = null;
  const names = { peak_load_ratio: 'peak load / capacity', failed: 'requests failed',
    retries: 'retries', recovery_time_s: 'recovery (s)', crashes: 'crashes',
    successes_lost: 'successes lost' };
  function figure(pane, strategy, column) {
    const p = panes[pane === 'a' ? 0 : 1];
    if (!p || !p.summary || (pane === 'b' && p.root.hidden)) return null;
    const rows = p.summary.trim().split('\n').map((l) => l.split(','));
    const at = rows[0].indexOf(column);
    const row = rows.find((r) => r[0] === strategy);
    if (!row || at < 0) return null;
    return row[at] === '' ? 'never' : row[at];
  }
  // The chart the step talks about, drawn in the lesson's own box beside its
  // text, so that the two are on one screen: the panels of the step's
  // `chart.panels` ([pane, strategy] pairs; by default the first two its
  // figures name), from the panes' last runs, on the step's `chart.figure`
  // (the load chart by default).
  let lessonPlots = [];
  function lessonChart() {
    const box = document.getElementById('lesson-chart');
    if (!box || !current) return;
    lessonPlots.forEach(({ u }) => u.destroy());
    lessonPlots = [];
    box.innerHTML = '';
    const chart = current.chart || {};
    const figure = chart.figure || 'load';
    let wanted = chart.panels;
    if (!wanted) {
      wanted = [];
      current.figures.forEach(([pane, s]) => {
        if (!wanted.some(([p, n]) => p === pane && n === s)) wanted.push([pane, s]);
      });
      wanted = wanted.slice(0, 2);
    }
    const drawnHere = [];
    ['a', 'b'].forEach((pane) => {
      const p = panes[pane === 'a' ? 0 : 1];
      const names = wanted.filter(([q]) => q === pane).map(([, n]) => n);
      if (!p || !p.facts || !names.length || (pane === 'b' && p.root.hidden)) return;
      const keep = p.facts.strategies.map((n) => names.includes(n));
      if (!keep.some(Boolean)) return;
      const lines = (text) => text.trim().split('\n');
      const only = (text) => {
        const [head, ...rows] = lines(text);
        return [head].concat(rows.filter((r) => names.includes(r.split(',')[0]))).join('\n') + '\n';
      };
      const facts = Object.assign({}, p.facts, {
        strategies: p.facts.strategies.filter((_, i) => keep[i]),
        colours: p.facts.colours.filter((_, i) => keep[i]),
        fleet: null,
        tiers: null,
      });
      const part = el('div', { class: 'lesson-pane' });
      part.appendChild(el('div', { class: 'lesson-pane-name' }, 'Configuration ' + pane.toUpperCase()));
      part.appendChild(el('div', { class: 'chart', id: `lesson-${pane}-chart-${figure}` }));
      box.appendChild(part);
      const drawn = window.RetryStorm.render({
        facts,
        data: { summary: only(p.summary), timeseries: only(p.timeseries) },
        root: part,
        prefix: `lesson-${pane}-`,
      });
      lessonPlots = lessonPlots.concat(drawn.plots);
      drawnHere.push(drawn);
    });
    // One scale for A and B, as in the panes: a taller curve is a larger number.
    const max = {};
    drawnHere.forEach((d) => Object.entries(d.yMax).forEach(([k, v]) => { max[k] = Math.max(max[k] || 0, v); }));
    drawnHere.forEach((d) => d.setYMax(max));
  }
  function showFigures() {
    lessonChart();
    const box = document.getElementById('lesson-figures');
    if (!box || !current) return;
    const parts = current.figures.map(([pane, s, c]) => {
      const v = figure(pane, s, c);
      return v == null ? null : `${pane.toUpperCase()} ${s}: ${names[c] || c} ${v}`;
    }).filter(Boolean);
    box.textContent = parts.length ? parts.join('; ') : 'set it up to see the numbers';
  }
  function showStep(i) {
    current = lessons[i];
    document.getElementById('lesson-step').value = i;
    const card = document.getElementById('lesson-card');
    card.innerHTML = '';
    card.appendChild(el('h3', {}, `${current.lesson}: ${current.title}`));
    [['Change', current.change], ['Expect', current.expect], ['Why', current.why]].forEach(([k, v]) => {
      const p = el('p');
      p.appendChild(el('span', { class: 'label' }, k + ': '));
      p.appendChild(document.createTextNode(v));
      card.appendChild(p);
    });
    const f = el('p');
    f.appendChild(el('span', { class: 'label' }, 'In this run: '));
    f.appendChild(el('span', { class: 'figures', id: 'lesson-figures' }));
    card.appendChild(f);
    card.appendChild(el('div', { id: 'lesson-chart' }));
    showFigures();
  }
  async function setUp() {
    const step = current;
    await panes[0].load(step.scenario, step.a);
    if (step.b) await showB(true, (b) => b.load(step.scenario, step.b));
    else if (panes[1]) await showB(false);
    showFigures();
  }
  function startLessons() {
    const select = document.getElementById('lesson-step');
    let group = null, og = null;
    lessons.forEach((l, i) => {
      if (l.lesson !== group) { group = l.lesson; og = el('optgroup', { label: group }); select.appendChild(og); }
      og.appendChild(el('option', { value: i }, l.title));
    });
    select.addEventListener('change', () => showStep(+select.value));
    document.getElementById('lesson-prev').addEventListener('click', () => showStep(Math.max(0, lessons.indexOf(current) - 1)));
    document.getElementById('lesson-next').addEventListener('click', () => showStep(Math.min(lessons.length - 1, lessons.indexOf(current) + 1)));
    document.getElementById('lesson-go').addEventListener('click', setUp);
    showStep(0);
  }

  async function start() {
    scenarios = await (await fetch('/api/scenarios')).json();
    const a = new Pane('a');
    a.onRun = showFigures;
    panes.push(a);
    startLessons();
    await a.load('outage');
    const toggle = document.getElementById('show-b');
    toggle.addEventListener('click', () => showB(toggle.getAttribute('aria-pressed') !== 'true'));
    document.getElementById('advise-go').addEventListener('click', searchSettings);
  }
  start();
})();
