//! The storage behind `VecMap` and `VecSet`: one entry or a pair inline, more in a sorted `Vec`; [`Pair`]
//! says whether a second entry is kept inline.
/// The room a `VecMap`/`VecSet` has for a second inline entry: `[T; 2]` (the default) keeps two entries inline
/// (a node's versions: the one it runs and the one it installs); [`OneInline`] keeps one and spills to the heap at
/// two, for entries too large to reserve twice (a node's resources and consumers).
pub trait Pair<T>: Sized {
    /// Both inline, or back if there is no room.
    fn pair(a: T, b: T) -> Result<Self, (T, T)>;
    /// The two entries.
    fn as_slice(&self) -> &[T];
    /// The two entries, mutably.
    fn as_mut_slice(&mut self) -> &mut [T];
    /// The two entries, by value.
    fn into_pair(self) -> (T, T);
}

impl<T> Pair<T> for [T; 2] {
    fn pair(a: T, b: T) -> Result<Self, (T, T)> {
        Ok([a, b])
    }
    fn as_slice(&self) -> &[T] {
        self
    }
    fn as_mut_slice(&mut self) -> &mut [T] {
        self
    }
    fn into_pair(self) -> (T, T) {
        let [a, b] = self;
        (a, b)
    }
}

/// No second inline entry (see [`Pair`]): at most one entry inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneInline {}

impl<T> Pair<T> for OneInline {
    fn pair(a: T, b: T) -> Result<Self, (T, T)> {
        Err((a, b))
    }
    fn as_slice(&self) -> &[T] {
        match *self {}
    }
    fn as_mut_slice(&mut self) -> &mut [T] {
        match *self {}
    }
    fn into_pair(self) -> (T, T) {
        match self {}
    }
}

/// One item or a pair inline, more in a `Vec`; always in order. Equality is by content, whatever the variant.
#[derive(Clone, Default)]
pub(crate) enum Store<T, P> {
    #[default]
    Empty,
    One([T; 1]),
    Two(P),
    Heap(Vec<T>),
}

impl<T, P: Pair<T>> Store<T, P> {
    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            Store::Empty => &[],
            Store::One(a) => a,
            Store::Two(p) => p.as_slice(),
            Store::Heap(v) => v,
        }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Store::Empty => &mut [],
            Store::One(a) => a,
            Store::Two(p) => p.as_mut_slice(),
            Store::Heap(v) => v,
        }
    }

    pub(crate) fn from_vec(mut v: Vec<T>) -> Self {
        match v.len() {
            0 => Store::Empty,
            1 => Store::One([v.pop().expect("one")]),
            2 => {
                let b = v.pop().expect("two");
                let a = v.pop().expect("two");
                match P::pair(a, b) {
                    Ok(p) => Store::Two(p),
                    Err((a, b)) => {
                        v.extend([a, b]);
                        Store::Heap(v)
                    }
                }
            }
            _ => Store::Heap(v),
        }
    }

    pub(crate) fn two(a: T, b: T) -> Self {
        match P::pair(a, b) {
            Ok(p) => Store::Two(p),
            Err((a, b)) => {
                let mut v = Vec::with_capacity(4);
                v.extend([a, b]);
                Store::Heap(v)
            }
        }
    }

    /// Inserts `x` at index `i` (`i <= len`).
    pub(crate) fn insert(&mut self, i: usize, x: T) {
        *self = match std::mem::take(self) {
            Store::Empty => Store::One([x]),
            Store::One([a]) if i == 0 => Store::two(x, a),
            Store::One([a]) => Store::two(a, x),
            Store::Two(p) => {
                let (a, b) = p.into_pair();
                let mut v = Vec::with_capacity(4);
                v.extend([a, b]);
                v.insert(i, x);
                Store::Heap(v)
            }
            Store::Heap(mut v) => {
                v.insert(i, x);
                Store::Heap(v)
            }
        }
    }

    /// Removes and returns the item at index `i` (`i < len`).
    pub(crate) fn remove(&mut self, i: usize) -> T {
        let (rest, x) = match std::mem::take(self) {
            Store::Empty => unreachable!("remove from an empty store"),
            Store::One([a]) => (Store::Empty, a),
            Store::Two(p) => match p.into_pair() {
                (a, b) if i == 0 => (Store::One([b]), a),
                (a, b) => (Store::One([a]), b),
            },
            Store::Heap(mut v) => {
                let x = v.remove(i);
                (Store::Heap(v), x)
            }
        };
        *self = rest;
        x
    }

    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&mut T) -> bool) {
        let mut i = 0;
        while i < self.as_slice().len() {
            if keep(&mut self.as_mut_slice()[i]) {
                i += 1;
            } else {
                self.remove(i);
            }
        }
    }

    pub(crate) fn into_vec(self) -> Vec<T> {
        match self {
            Store::Empty => Vec::new(),
            Store::One(a) => a.into(),
            Store::Two(p) => {
                let (a, b) = p.into_pair();
                vec![a, b]
            }
            Store::Heap(v) => v,
        }
    }
}

impl<T: PartialEq, P: Pair<T>> PartialEq for Store<T, P> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq, P: Pair<T>> Eq for Store<T, P> {}
