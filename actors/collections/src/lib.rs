//! convoy's generic collections, each encoded exactly like the std collection it replaces so that snapshots
//! keep their bytes: small sorted maps and sets (`VecMap`, `VecSet`), a chunked copy-on-write vector
//! (`ChunkedVec`) and a copy-on-write ordered map (`CowMap`).
#![warn(missing_docs)]

pub mod chunked;
pub mod cow;
pub mod inline;
pub mod vecmap;
pub mod vecset;

pub use chunked::ChunkedVec;
pub use cow::CowMap;
pub use inline::{OneInline, Pair};
pub use vecmap::VecMap;
pub use vecset::VecSet;
