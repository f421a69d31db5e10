//! The entries of the event queue and the heap its near and overflow lanes
//! are: a four-ary min-heap of packed keys.

/// One scheduled entry: the packed key and its payload.
#[derive(Clone, Copy)]
pub(super) struct Entry<E> {
    pub(super) key: u128,
    pub(super) event: E,
}

/// Children of a node of [`Heap`].
const ARITY: usize = 4;

/// A min-heap of entries in which each node has four children (a d-ary heap,
/// Johnson 1975; LaMarca and Ladner, "The influence of caches on the
/// performance of heaps", JEA 1, 1996): half as deep as a binary heap, and a
/// node's children are found with three comparisons of which two are
/// independent. It is written here rather than taken from `std` so that the
/// run loop's pop is inlined: `BinaryHeap::pop` was a call whose result came
/// back through memory, and the loads of the event from it were the run
/// loop's most expensive instructions (a store that cannot be forwarded to a
/// load of another width stalls the core).
///
/// Taking out the first entry moves the hole at the root down to a leaf
/// along the smallest children, then the last entry up into it (Floyd's
/// improvement: the last entry is usually due late and would sink to the
/// bottom anyway).
#[derive(Clone)]
pub(super) struct Heap<E> {
    v: Vec<Entry<E>>,
}

impl<E: Copy> Heap<E> {
    pub(super) fn new() -> Self {
        Heap { v: Vec::new() }
    }

    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.v.len()
    }

    #[inline(always)]
    pub(super) fn peek(&self) -> Option<&Entry<E>> {
        self.v.first()
    }

    #[inline(always)]
    pub(super) fn push(&mut self, entry: Entry<E>) {
        self.v.push(entry);
        let at = self.v.len() - 1;
        self.sift_up(at, entry);
    }

    /// Moves `entry` up from the hole at `at` to where it belongs.
    #[inline(always)]
    fn sift_up(&mut self, mut at: usize, entry: Entry<E>) {
        while at > 0 {
            let parent = (at - 1) / ARITY;
            let p = self.v[parent];
            if p.key < entry.key {
                break;
            }
            self.v[at] = p;
            at = parent;
        }
        self.v[at] = entry;
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Entry<E>> {
        let top = *self.v.first()?;
        let last = self.v.pop()?;
        let n = self.v.len();
        if n == 0 {
            return Some(top);
        }
        let mut hole = 0;
        while let Some(child) = self.smallest_child(hole, n) {
            self.v[hole] = self.v[child];
            hole = child;
        }
        self.sift_up(hole, last);
        Some(top)
    }

    /// The smallest child of `node` among the first `n` entries, if it has any.
    #[inline(always)]
    fn smallest_child(&self, node: usize, n: usize) -> Option<usize> {
        let first = ARITY * node + 1;
        if first + ARITY <= n {
            let c = &self.v[first..first + ARITY];
            let a = usize::from(c[1].key < c[0].key);
            let b = 2 + usize::from(c[3].key < c[2].key);
            Some(first + if c[b].key < c[a].key { b } else { a })
        } else if first < n {
            let mut child = first;
            for c in first + 1..n {
                if self.v[c].key < self.v[child].key {
                    child = c;
                }
            }
            Some(child)
        } else {
            None
        }
    }

    /// Keeps the entries whose events `keep` accepts, and restores the heap.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        self.v.retain(|e| keep(&e.event));
        self.v.sort_unstable_by_key(|e| e.key);
    }
}
