//! Tests of the reference Soroban contracts in the real Soroban host (soroban-sdk testutils),
//! fed by ../vectors.json, which contracts/soroban/vectors.ts makes with the service's own code.
#[cfg(test)]
mod ad_manager;
#[cfg(test)]
mod ceremony_key;
#[cfg(test)]
mod costs;
#[cfg(test)]
mod event_fixtures;
#[cfg(test)]
mod order_portal;
#[cfg(test)]
mod rotation;
#[cfg(test)]
mod support;
#[cfg(test)]
mod timeouts;
