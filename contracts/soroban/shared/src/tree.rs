//! The OrderPortal's incremental depth-20 Poseidon tree with its last 100 roots, as
//! PoseidonTree.sol: zero leaves, leaves in index order, node = Poseidon2(left, right).
use soroban_sdk::{contracttype, Env, Vec, U256};

use crate::poseidon::{zero, Poseidon};
use crate::Error;

/// Tree depth: 2^20 deposits, as the circuit's path.
pub const DEPTH: u32 = 20;
/// How many recent roots a proof may be made against.
pub const ROOT_HISTORY: u32 = 100;

/// The tree's state, kept in instance storage (about 5 KB at most).
#[contracttype]
#[derive(Clone, Debug)]
pub struct TreeState {
    /// Index the next leaf gets; equals the number of leaves.
    pub next_index: u32,
    /// The last left node seen at each level.
    pub filled_subtrees: Vec<U256>,
    /// Ring of the last ROOT_HISTORY roots; `current` indexes the newest.
    pub roots: Vec<U256>,
    pub current: u32,
}

#[contracttype]
enum TreeKey {
    Tree,
}

/// Sets up the empty tree (its root is the first known root).
pub fn init(env: &Env) {
    let mut filled = Vec::new(env);
    for level in 0..DEPTH {
        filled.push_back(zero(env, level));
    }
    let mut roots = Vec::new(env);
    roots.push_back(zero(env, DEPTH));
    let state = TreeState { next_index: 0, filled_subtrees: filled, roots, current: 0 };
    env.storage().instance().set(&TreeKey::Tree, &state);
}

/// The stored tree state.
pub fn state(env: &Env) -> TreeState {
    env.storage().instance().get(&TreeKey::Tree).expect("tree not initialised")
}

/// Appends a leaf; returns its index and the new root.
pub fn insert(env: &Env, leaf: U256) -> Result<(u32, U256), Error> {
    let mut s = state(env);
    let index = s.next_index;
    if index >= 1 << DEPTH {
        return Err(Error::TreeFull);
    }
    let poseidon = Poseidon::two(env);
    let mut current = leaf;
    let mut position = index;
    for level in 0..DEPTH {
        if position & 1 == 0 {
            s.filled_subtrees.set(level, current.clone());
            current = poseidon.hash2(&current, &zero(env, level));
        } else {
            current = poseidon.hash2(&s.filled_subtrees.get_unchecked(level), &current);
        }
        position >>= 1;
    }
    s.current = (s.current + 1) % ROOT_HISTORY;
    if s.roots.len() < ROOT_HISTORY {
        s.roots.push_back(current.clone());
    } else {
        s.roots.set(s.current, current.clone());
    }
    s.next_index = index + 1;
    env.storage().instance().set(&TreeKey::Tree, &s);
    Ok((index, current))
}

/// The root after the latest insertion (the empty tree's before any).
pub fn current_root(env: &Env) -> U256 {
    let s = state(env);
    s.roots.get_unchecked(s.current)
}

/// True when `root` is one of the last ROOT_HISTORY roots (zero never is).
pub fn is_known_root(env: &Env, root: &U256) -> bool {
    if *root == U256::from_u32(env, 0) {
        return false;
    }
    state(env).roots.contains(root)
}
