// retry-storm's charts: interactive charts of a run's or a sweep's CSV files,
// drawn with uPlot (loaded before this script), and sortable tables. Used by
// report.html, which embeds its CSV files, and by `sim serve`'s playground,
// which gets them from a fresh run. Nothing is fetched from anywhere else.
//
// RetryStorm.render({ facts, data, root, prefix }) draws into the elements of
// `root` whose ids start with `prefix`: toggles, chart-load, chart-goodput,
// chart-backlog (a run), sweep-charts and chart-timeline (a sweep), and makes
// root's table.sortable tables sortable. `data` holds the CSV texts: summary,
// and timeseries (a run) or timeline (a sweep).
window.RetryStorm = (function () {
  'use strict';
  function render({ facts, data, root, prefix = '' }) {
  const byId = (id) => root.querySelector('#' + prefix + id);

  // A CSV parser for the files this tool writes: quoted fields may hold commas,
  // quotes (doubled) and newlines.
  function parseCsv(text) {
    const rows = [];
    let row = [], field = '', quoted = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
        else if (c === '"') quoted = false;
        else field += c;
      } else if (c === '"') quoted = true;
      else if (c === ',') { row.push(field); field = ''; }
      else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; }
      else if (c !== '\r') field += c;
    }
    if (field !== '' || row.length) { row.push(field); rows.push(row); }
    return { header: rows[0] || [], rows: rows.slice(1) };
  }

  // ---------------------------------------------------------------- the table
  function sortable(table) {
    const heads = table.tHead ? table.tHead.rows[0].cells : [];
    const key = (text) => {
      if (text === 'never') return Infinity;
      const v = parseFloat(text);
      return Number.isNaN(v) ? text : v;
    };
    Array.from(heads).forEach((th, col) => {
      th.tabIndex = 0;
      th.setAttribute('role', 'button');
      const sort = () => {
        const body = table.tBodies[0];
        const up = th.getAttribute('aria-sort') !== 'ascending';
        Array.from(heads).forEach((h) => h.removeAttribute('aria-sort'));
        th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = key(a.cells[col].textContent), y = key(b.cells[col].textContent);
          const d = typeof x === 'number' && typeof y === 'number'
            ? x - y : String(x).localeCompare(String(y));
          return up ? d : -d;
        });
        rows.forEach((r) => body.appendChild(r));
      };
      th.addEventListener('click', sort);
      th.addEventListener('keydown', (e) => { if (e.key === 'Enter') sort(); });
    });
  }
  root.querySelectorAll('table.sortable').forEach(sortable);

  if (typeof uPlot === 'undefined') return { plots: [] };
  const names = facts.strategies;
  // With many strategies, start with the first few: a student sees them apart
  // and adds the others one by one (the toggles say what is hidden).
  const MANY = 8, FIRST = 4;
  const shown = names.map((n, i) => names.length <= MANY || i < FIRST);
  const plots = [];
  const listeners = [];

  // One set of strategy toggles for every chart on the page.
  function makeToggles() {
    const toggles = byId('toggles');
    if (!toggles) return;
    const apply = () => {
      plots.forEach(({ u, spec }) => {
        spec.series.forEach((s, k) => u.setSeries(k + 1, { show: shown[s.i] }));
        u.redraw(false);
      });
      listeners.forEach((f) => f());
      Array.from(toggles.querySelectorAll('button[data-i]')).forEach((b) => {
        b.setAttribute('aria-pressed', shown[+b.dataset.i] ? 'true' : 'false');
      });
    };
    names.forEach((n, i) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.i = i;
      b.innerHTML = '<span class="swatch"></span>';
      b.querySelector('.swatch').style.background = facts.colours[i];
      b.appendChild(document.createTextNode(n));
      b.addEventListener('click', () => { shown[i] = !shown[i]; apply(); });
      toggles.appendChild(b);
    });
    if (names.length > MANY) {
      const note = document.createElement('span');
      note.className = 'hint';
      note.textContent = `the first ${FIRST} of ${names.length} are shown; click to add or remove:`;
      toggles.prepend(note);
    }
    [['all', true], ['none', false]].forEach(([label, v]) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'all';
      b.textContent = label;
      b.addEventListener('click', () => { shown.fill(v); apply(); });
      toggles.appendChild(b);
    });
    apply();
  }

  const legendValue = (u, v) => (v == null ? '-' : (Math.round(v * 1000) / 1000).toString());

  function runCharts() {
    // ---------------------------------------------------------------- the data
    const ts = parseCsv(data.timeseries);
    const summary = parseCsv(data.summary);
    const col = (name) => ts.header.indexOf(name);
    const half = facts.bucket_s / 2;
    const perStrategy = new Map(names.map((n) => [n, []]));
    for (const row of ts.rows) {
      const list = perStrategy.get(row[0]);
      if (list) list.push(row);
    }
    const first = perStrategy.get(names[0]) || [];
    const t = first.map((r) => +r[col('t_s')] + half);
    const values = (name, f) => (perStrategy.get(name) || []).map(f);
    const num = (c) => { const i = col(c); return (r) => (i < 0 || r[i] === '' ? null : +r[i]); };
    // What the crash limit counts: requests held, queued plus in service.
    const held = (r) => +r[col('queue_len')] + +r[col('busy_workers')];
    const sumCol = (c) => summary.header.indexOf(c);
    const figureOf = (n, c) => {
      const row = summary.rows.find((r) => r[0] === n);
      return row && sumCol(c) >= 0 ? row[sumCol(c)] : '';
    };
    const lastEnd = facts.outages.reduce((m, o) => Math.max(m, o[1]), -Infinity);
    const hasTrigger = facts.outages.length > 0;
    const recoveredAt = names.map((n) => {
      const v = figureOf(n, 'recovery_time_s');
      return !hasTrigger || v === '' ? null : lastEnd + +v;
    });
    const caption = (n, i) => {
      if (!hasTrigger) return `${n}: ${figureOf(n, 'failed')} failed`;
      const rec = recoveredAt[i] == null ? 'never recovered' : `recovered ${figureOf(n, 'recovery_time_s')} s after the trigger`;
      const crashes = figureOf(n, 'crashes');
      return `${n}: ${rec}; ${figureOf(n, 'failed')} failed, ${crashes} crash${crashes === '1' ? '' : 'es'}`;
    };

    // ---------------------------------------------------------------- figures
    // Small multiples: one panel per strategy, on one scale per figure, so a
    // strategy's curve is never hidden under another's.
    const figures = [
      {
        id: 'chart-load', unit: 'attempts/s', line: facts.capacity_per_s,
        title: 'Load on the server: attempts per second' +
          (facts.capacity_per_s ? ' (dashed: the capacity)' : ''),
        parts: (n) => [{ label: 'attempts/s', data: values(n, num('attempts_per_s')) }],
      },
      {
        id: 'chart-goodput', unit: 'successes/s',
        title: 'Goodput: successes per second' +
          (hasTrigger ? ' (dashed: the same run without the trigger)' : ''),
        parts: (n) => [{ label: 'successes/s', data: values(n, num('goodput_per_s')) }]
          .concat(hasTrigger ? [{ label: 'without the trigger', dashed: true,
            data: values(n, num('normal_goodput_per_s')) }] : []),
      },
      {
        id: 'chart-backlog', unit: 'requests', line: facts.crash_limit,
        title: 'Requests at the server, queued and in service' +
          (facts.crash_limit ? ` (dashed: the crash limit, ${facts.crash_limit})` : '') +
          '; grey: requests waiting out a backoff',
        parts: (n) => [{ label: 'at the server', data: values(n, held) },
          { label: 'waiting to retry', grey: true, data: values(n, num('backing_off')) }],
      },
    ];
    if (facts.tiers) {
      // A call chain: each tier's attempts in the strategy's colour, one
      // line pattern per tier.
      const patterns = [[undefined, 'solid'], [[8, 4], 'dashed'], [[2, 3], 'dotted'], [[10, 3, 2, 3], 'dash-dot']];
      const pattern = (k) => patterns[k % patterns.length];
      const services = facts.tiers.services;
      figures.push({
        id: 'chart-tiers', unit: 'attempts/s', line: null,
        title: 'Attempts per second at each tier (' +
          services.map((svc, k) => `${pattern(k)[1]}: ${svc}`).join(', ') + ')',
        parts: (n) => {
          const per = facts.tiers.attempts[facts.strategies.indexOf(n)] || [];
          return services.map((svc, k) => ({
            label: svc, dash: pattern(k)[0],
            data: (per[k] || []).map((a) => a / facts.bucket_s),
          }));
        },
      });
    }

    let syncing = false;
    function decorate(u, fig, i) {
      const ctx = u.ctx;
      const { left, top, width, height } = u.bbox;
      const x = (v) => u.valToPos(v, 'x', true);
      ctx.save();
      ctx.beginPath();
      ctx.rect(left, top, width, height);
      ctx.clip();
      for (const [a, b] of facts.outages) {
        ctx.fillStyle = 'rgba(0, 0, 0, 0.10)';
        ctx.fillRect(x(a), top, x(b) - x(a), height);
      }
      if (fig.line) {
        const y = u.valToPos(fig.line, 'y', true);
        ctx.strokeStyle = '#000';
        ctx.setLineDash([6, 4]);
        ctx.lineWidth = 1;
        ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(left + width, y); ctx.stroke();
      }
      if (recoveredAt[i] != null) {
        ctx.setLineDash([2, 3]);
        ctx.lineWidth = 2;
        ctx.strokeStyle = '#000';
        const at = x(recoveredAt[i]);
        ctx.beginPath(); ctx.moveTo(at, top); ctx.lineTo(at, top + height); ctx.stroke();
      }
      ctx.restore();
    }

    function make(fig) {
      const el = byId(fig.id);
      if (!el) return;
      const heading = document.createElement('h3');
      heading.textContent = fig.title;
      el.appendChild(heading);
      const grid = document.createElement('div');
      grid.className = 'multiples';
      el.appendChild(grid);
      const series = names.map((n) => fig.parts(n));
      // One scale for the panels shown (a hidden strategy's storm does not
      // flatten the others), with room above the largest value or line.
      fig.top = () => {
        const peak = Math.max(fig.line || 0, ...series.filter((_, i) => shown[i]).flat()
          .flatMap((p) => p.data.filter((v) => v != null)));
        return peak > 0 ? peak * 1.08 : 1;
      };
      fig.max = fig.top();
      fig.el = el;
      el.dataset.ymax = fig.max;
      fig.panels = [];
      names.forEach((n, i) => {
        const panel = document.createElement('div');
        panel.className = 'panel';
        panel.dataset.i = i;
        const title = document.createElement('div');
        title.className = 'panel-title';
        title.innerHTML = '<span class="swatch"></span>';
        title.querySelector('.swatch').style.background = facts.colours[i];
        title.appendChild(document.createTextNode(caption(n, i)));
        panel.appendChild(title);
        grid.appendChild(panel);
        panel.hidden = !shown[i];
        const opts = {
          width: Math.max(280, panel.clientWidth || grid.clientWidth / 2 || 440),
          height: 190,
          scales: { x: { time: false }, y: { range: () => [0, fig.max] } },
          axes: [{ label: 'simulated time (s)', size: 36 }, { label: fig.unit, size: 60 }],
          cursor: { sync: { key: 'retry-storm' + prefix }, drag: { x: true, y: false } },
          legend: { live: true },
          series: [{ label: 't (s)', value: (u, v) => (v == null ? '-' : v.toFixed(2)) }].concat(
            series[i].map((p) => ({
              label: p.label,
              stroke: p.grey ? '#8a8a8a' : p.dashed ? '#222' : facts.colours[i],
              width: p.dashed ? 1 : 1.5,
              dash: p.dash || (p.dashed ? [6, 4] : undefined),
              points: { show: false },
              value: (u, v) => (v == null ? '-' : (Math.round(v * 10) / 10).toString()),
            }))),
          hooks: {
            draw: [(u) => decorate(u, fig, i)],
            setScale: [(u, key) => {
              if (key !== 'x') return;
              // The visible time range, readable from the page (and its tests).
              el.dataset.xmin = u.scales.x.min;
              el.dataset.xmax = u.scales.x.max;
              if (syncing) return;
              syncing = true;
              const { min, max } = u.scales.x;
              plots.forEach((p) => { if (p.u !== u && p.run) p.u.setScale('x', { min, max }); });
              syncing = false;
            }],
          },
        };
        const u = new uPlot(opts, [t].concat(series[i].map((p) => p.data)), panel);
        fig.panels.push({ panel, u });
        plots.push({ u, spec: { series: [] }, run: true });
      });
      listeners.push(() => {
        fig.max = fig.top();
        el.dataset.ymax = fig.max;
        fig.panels.forEach(({ panel, u }) => {
          panel.hidden = !shown[+panel.dataset.i];
          fit(u);
          u.setScale('y', { min: 0, max: fig.max });
        });
        yScales.max[fig.id] = fig.max;
      });
    }
    figures.forEach(make);
    // The largest value of each figure, and a way to put several pages' (A
    // and B in the playground) on the same scale.
    yScales.max = Object.fromEntries(figures.map((f) => [f.id, f.max]));
    yScales.set = (max) => figures.forEach((f) => {
      if (!(f.id in max) || !f.panels) return;
      f.max = max[f.id];
      f.el.dataset.ymax = f.max;
      f.panels.forEach(({ u }) => u.setScale('y', { min: 0, max: f.max }));
    });
  }
  const yScales = { max: {}, set: () => {} };

  // ---------------------------------------------------------------- sweeps
  function sweepCharts() {
    const summary = parseCsv(data.summary);
    const at = (c) => summary.header.indexOf(c);
    const host = byId('sweep-charts');
    const axes = facts.axes;
    const cell = (row, c) => {
      const v = row[at(c)];
      if (v === undefined || v === '') return null;
      if (v === 'never') return Infinity;
      return +v;
    };
    const rowFor = (values, strategy) => summary.rows.find((r) =>
      r[at('strategy')] === strategy && axes.every((a, k) => +r[at(a.column)] === values[k]));
    for (const chart of facts.charts) {
      const box = document.createElement('div');
      box.className = 'chart';
      box.id = 'chart-' + chart.name;
      host.appendChild(box);
      const h = document.createElement('h3');
      h.textContent = chart.label + ({ median: ' (median of the runs)', share: '' }[chart.stat] ?? ' (mean of the runs)');
      box.appendChild(h);
      if (axes.length === 1) {
        const xs = axes[0].values;
        const spec = {
          series: names.map((n, i) => ({
            i, label: n,
            data: xs.map((x) => {
              const r = rowFor([x], n);
              const v = r ? cell(r, chart.column) : null;
              return v === Infinity ? null : v;
            }),
          })),
        };
        const nevers = names.map((n) => xs.filter((x) => { const r = rowFor([x], n); return r && cell(r, chart.column) === Infinity; }));
        if (spec.series.every((s) => s.data.every((v) => v == null)) && !nevers.some((l) => l.length)) {
          const p = document.createElement('p');
          p.className = 'hint empty';
          p.textContent = 'No run has this figure' +
            (chart.name.startsWith('recover') || chart.name === 'successes_lost' || chart.name === 'extra_attempts'
              ? ': the scenario has no trigger to recover from.' : '.');
          box.appendChild(p);
          box.classList.add('empty');
          continue;
        }
        if (nevers.some((l) => l.length)) {
          const p = document.createElement('p');
          p.className = 'hint never';
          p.textContent = 'never: ' + names.map((n, i) => nevers[i].length ? n + ' at ' + nevers[i].join(', ') : '').filter(Boolean).join('; ');
          box.appendChild(p);
        }
        const opts = {
          width: Math.max(320, box.clientWidth || 900), height: 300,
          scales: { x: { time: false }, y: chart.log ? { distr: 3 } : { range: (u, lo, hi) => [Math.min(0, lo), hi > 0 ? hi * 1.08 : 1] } },
          axes: [
            { label: axes[0].parameter, splits: () => xs,
              values: (u, ticks) => ticks.map((v) => axes[0].labels[xs.indexOf(v)] ?? v) },
            { label: chart.label, size: 70 },
          ],
          cursor: { drag: { x: false, y: false } },
          series: [{ label: axes[0].parameter }].concat(spec.series.map((s) => ({
            label: s.label, stroke: facts.colours[s.i], width: 2,
            points: { show: true, size: 6, fill: facts.colours[s.i] }, value: legendValue,
          }))),
        };
        const u = new uPlot(opts, [xs].concat(spec.series.map((s) => s.data)), box);
        plots.push({ u, spec });
      } else {
        heatmaps(box, chart, rowFor, cell);
      }
    }
    // The timeline: attempts per second, first run at the timeline's point.
    const tl = parseCsv(data.timeline);
    const tc = (c) => tl.header.indexOf(c);
    const per = new Map(names.map((n) => [n, []]));
    tl.rows.forEach((r) => { const l = per.get(r[0]); if (l) l.push(r); });
    const first = per.get(names[0]) || [];
    if (first.length) {
      const box = byId('chart-timeline');
      const h = document.createElement('h3');
      h.textContent = 'Attempts per second over time: the first run at ' + facts.timeline_at;
      box.appendChild(h);
      const t = first.map((r) => +r[tc('t_s')] + facts.bucket_s / 2);
      const spec = { series: names.map((n, i) => ({ i, label: n,
        data: per.get(n).map((r) => +r[tc('attempts')] / facts.bucket_s) })) };
      const u = new uPlot({
        width: Math.max(320, box.clientWidth || 900), height: 300,
        scales: { x: { time: false } },
        axes: [{ label: 'simulated time (s)' }, { label: 'attempts/s', size: 70 }],
        cursor: { drag: { x: true, y: false } },
        series: [{ label: 't (s)' }].concat(spec.series.map((s) => ({
          label: s.label, stroke: facts.colours[s.i], width: 1.5, points: { show: false }, value: legendValue }))),
      }, [t].concat(spec.series.map((s) => s.data)), box);
      plots.push({ u, spec });
    }
  }

  // A map: one grid per strategy, the first axis across and the second down,
  // cells shaded on one scale for all strategies; "never" is a dark cell.
  function heatmaps(box, chart, rowFor, cell) {
    const [ax, ay] = facts.axes;
    let lo = Infinity, hi = -Infinity;
    names.forEach((n) => ax.values.forEach((x) => ay.values.forEach((y) => {
      const r = rowFor([x, y], n);
      const v = r ? cell(r, chart.column) : null;
      if (v != null && Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    })));
    // One hue, light for the smallest value and dark for the largest.
    const level = (v) => (hi > lo ? (v - lo) / (hi - lo) : 0);
    const shade = (v) => `hsl(210, 65%, ${94 - 56 * level(v)}%)`;
    const key = document.createElement('p');
    key.className = 'hint scale';
    const fmt = (v) => (Number.isFinite(v) ? (Math.round(v * 100) / 100).toString() : '-');
    key.innerHTML = '<span></span> <span class="ramp"></span> <span></span> ' +
      '<span class="never-key">never</span> one scale for all strategies';
    key.children[0].textContent = fmt(lo);
    key.children[2].textContent = fmt(hi);
    box.appendChild(key);
    const grids = document.createElement('div');
    grids.className = 'heatmaps';
    box.appendChild(grids);
    names.forEach((n, i) => {
      const wrap = document.createElement('div');
      wrap.className = 'heatmap';
      wrap.dataset.i = i;
      const table = document.createElement('table');
      const cap = table.createCaption();
      cap.textContent = n;
      const head = table.createTHead().insertRow();
      const corner = document.createElement('th');
      corner.textContent = ay.parameter + ' \\ ' + ax.parameter;
      head.appendChild(corner);
      ax.labels.forEach((l) => { const th = document.createElement('th'); th.textContent = l; head.appendChild(th); });
      const body = table.createTBody();
      ay.values.forEach((y, k) => {
        const tr = body.insertRow();
        const th = document.createElement('th');
        th.textContent = ay.labels[k];
        tr.appendChild(th);
        ax.values.forEach((x) => {
          const td = tr.insertCell();
          const r = rowFor([x, y], n);
          const v = r ? cell(r, chart.column) : null;
          if (v === Infinity) { td.textContent = 'never'; td.className = 'never'; }
          else if (v == null) td.textContent = '-';
          else {
            td.textContent = (Math.round(v * 100) / 100).toString();
            td.style.background = shade(v);
            if (level(v) > 0.55) td.style.color = '#fff';
          }
        });
      });
      wrap.appendChild(table);
      grids.appendChild(wrap);
    });
    listeners.push(() => grids.querySelectorAll('.heatmap').forEach((w) => {
      w.hidden = !shown[+w.dataset.i];
    }));
  }

  // ---------------------------------------------------------------- a fleet
  // One map per strategy: time across, replicas up, each cell shaded by the
  // requests the replica held (viridis, one scale for all, topped at the
  // crash limit), grey while it was out of the balancer's rotation. The
  // cells are those of replicas.png; hovering one says what it holds.
  const VIRIDIS = [[0x44, 0x01, 0x54], [0x3b, 0x52, 0x8b], [0x21, 0x91, 0x8c], [0x5e, 0xc9, 0x62], [0xfd, 0xe7, 0x25]];
  function viridis(t) {
    const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
    const i = Math.min(Math.floor(x), VIRIDIS.length - 2), u = x - i;
    const c = VIRIDIS[i].map((a, k) => Math.round(a + (VIRIDIS[i + 1][k] - a) * u));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }
  function fleetMaps() {
    const box = byId('chart-fleet');
    if (!box) return;
    const fleet = facts.fleet;
    const title = document.createElement('h3');
    title.textContent = 'Requests held by each replica';
    const key = document.createElement('p');
    key.className = 'hint';
    key.innerHTML = 'Time across, replicas up. <span class="swatch" style="background:' + viridis(0) +
      '"></span> none held, <span class="swatch" style="background:' + viridis(1) + '"></span> ' +
      '<span class="top"></span> or more, <span class="swatch" style="background:#cdcdcd"></span> ' +
      'out of the balancer\'s rotation (ejected, failing its health checks, starting or scaled away). ' +
      'Hover a cell for its figures.';
    key.querySelector('.top').textContent = fleet.top + (facts.crash_limit ? ' (the crash limit)' : '');
    box.append(title, key);
    fleet.maps.forEach((m) => {
      const panel = document.createElement('div');
      panel.className = 'fleet-map';
      panel.dataset.i = m.i;
      const cap = document.createElement('p');
      cap.className = 'fleet-caption';
      cap.style.borderLeft = '6px solid ' + facts.colours[m.i];
      // Replicas out of the rotation at the start are an autoscaler's room
      // to grow (as replicas.png says it).
      const grows = m.rotation.some((v, k) => k % m.cols === 0 && v < 0.5);
      cap.textContent = `${names[m.i]}: ${grows ? 'up to ' : ''}${m.replicas} replica${m.replicas === 1 ? '' : 's'}`;
      const canvas = document.createElement('canvas');
      const tip = document.createElement('p');
      tip.className = 'hint fleet-tip';
      tip.textContent = '\u00a0';
      panel.append(cap, canvas, tip);
      box.appendChild(panel);
      const rows = m.held.length / Math.max(1, m.cols);
      const LEFT = 44, BOTTOM = 20;
      function draw() {
        const w = Math.max(280, panel.clientWidth || 600);
        const h = Math.min(260, Math.max(70, rows * 14)) + BOTTOM;
        const dpr = window.devicePixelRatio || 1;
        canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
        canvas.style.width = w + 'px'; canvas.style.height = h + 'px';
        const g = canvas.getContext('2d');
        g.setTransform(dpr, 0, 0, dpr, 0, 0);
        g.clearRect(0, 0, w, h);
        const cw = (w - LEFT) / m.cols, rh = (h - BOTTOM) / rows;
        for (let r = 0; r < rows; r++) {
          for (let c = 0; c < m.cols; c++) {
            const k = r * m.cols + c;
            g.fillStyle = m.rotation[k] < 0.5 ? '#cdcdcd' : viridis(m.held[k] / fleet.top);
            // Row 0 at the bottom, as replicas.png has it; edges on whole
            // pixels, so neighbouring cells leave no seam.
            const x0 = Math.round(LEFT + c * cw), x1 = Math.round(LEFT + (c + 1) * cw);
            const y0 = Math.round((rows - 1 - r) * rh), y1 = Math.round((rows - r) * rh);
            g.fillRect(x0, y0, x1 - x0, y1 - y0);
          }
        }
        g.fillStyle = '#333';
        g.font = '11px sans-serif';
        g.textAlign = 'right';
        g.textBaseline = 'middle';
        const label = (r) => (m.row_group > 1 ? `${r * m.row_group}` : `${r}`);
        g.fillText(label(0), LEFT - 4, (rows - 0.5) * rh);
        if (rows > 1) g.fillText(label(rows - 1), LEFT - 4, 0.5 * rh);
        g.textAlign = 'center';
        g.textBaseline = 'top';
        [0, 0.25, 0.5, 0.75, 1].forEach((f) => {
          const t = f * facts.duration_s;
          g.fillText(`${Math.round(t)} s`, Math.min(w - 16, Math.max(LEFT + 10, LEFT + f * (w - LEFT))), h - BOTTOM + 4);
        });
        g.strokeStyle = '#fff';
        facts.outages.flat().forEach((t) => {
          const x = LEFT + (t / facts.duration_s) * (w - LEFT);
          g.beginPath(); g.moveTo(x, 0); g.lineTo(x, h - BOTTOM); g.stroke();
        });
        canvas.onmousemove = (e) => {
          const b = canvas.getBoundingClientRect();
          const c = Math.floor((e.clientX - b.left - LEFT) / cw);
          const r = rows - 1 - Math.floor((e.clientY - b.top) / rh);
          if (c < 0 || c >= m.cols || r < 0 || r >= rows) { tip.textContent = '\u00a0'; return; }
          const k = r * m.cols + c;
          const from = r * m.row_group, to = Math.min(m.replicas, (r + 1) * m.row_group) - 1;
          const who = from === to ? `replica ${from}` : `replicas ${from} to ${to} (their mean)`;
          const t0 = c * m.col_s, t1 = Math.min(facts.duration_s, (c + 1) * m.col_s);
          tip.textContent = `${who}, ${t0.toFixed(1)} s to ${t1.toFixed(1)} s: ` +
            `${m.held[k]} requests held, in the rotation ${Math.round(m.rotation[k] * 100)}% of the time`;
        };
        canvas.onmouseleave = () => { tip.textContent = '\u00a0'; };
      }
      draw();
      maps.push({ panel, draw });
    });
    listeners.push(() => maps.forEach(({ panel, draw }) => {
      panel.hidden = !shown[+panel.dataset.i];
      if (!panel.hidden) draw();
    }));
  }
  const maps = [];

  if (facts.kind === 'sweep') sweepCharts(); else runCharts();
  if (facts.fleet) { fleetMaps(); fleetDraws.push(...maps); }
  makeToggles();
  plots.forEach(({ u }) => live.add(u));
  return { plots, yMax: yScales.max, setYMax: yScales.set };
  }

  // Every chart on the page, resized with the window; charts of a pane drawn
  // again (the playground) are gone from the page and are dropped here.
  const live = new Set();
  function fit(u) {
    const parent = u.root.parentElement;
    const w = parent ? parent.clientWidth : 0;
    if (w > 0 && Math.abs(w - u.width) > 1) u.setSize({ width: Math.max(280, w), height: u.height });
  }
  // Fleet maps are canvases: drawn again at the new width (those of a pane
  // drawn again are gone from the page and are dropped).
  const fleetDraws = [];
  window.addEventListener('resize', () => {
    live.forEach((u) => {
      if (!u.root.isConnected) { live.delete(u); return; }
      fit(u);
    });
    for (let k = fleetDraws.length - 1; k >= 0; k--) {
      if (!fleetDraws[k].panel.isConnected) fleetDraws.splice(k, 1);
      else if (!fleetDraws[k].panel.hidden) fleetDraws[k].draw();
    }
  });
  return { render };
})();

// A report page carries its facts and CSV files in script elements.
(function () {
  const el = (id) => document.getElementById(id);
  if (!el('facts')) return;
  const text = (id) => (el(id) ? JSON.parse(el(id).textContent) : null);
  window.RetryStorm.render({
    facts: JSON.parse(el('facts').textContent),
    data: { summary: text('summary-csv'), timeseries: text('timeseries-csv'), timeline: text('timeline-csv') },
    root: document,
  });
})();
