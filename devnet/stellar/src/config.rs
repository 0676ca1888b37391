//! The network's settings: fees, limits, TTLs and the host's cost model.

use soroban_env_host::budget::Budget;
use soroban_env_host::fees::{FeeConfiguration, RentFeeConfiguration};
use soroban_env_host::xdr::{ContractCostParamEntry, ContractCostParams, ContractCostType, ExtensionPoint};
use soroban_simulation::NetworkConfig;

/// The protocol of soroban-env-host 25 (and of the contracts' soroban-sdk 25).
pub const PROTOCOL_VERSION: u32 = 25;
/// Minimum inclusion fee per operation, in stroops (the network's base fee).
pub const BASE_FEE: i64 = 100;
/// Base reserve in stroops (0.5 XLM, as on the public networks).
pub const BASE_RESERVE: u32 = 5_000_000;
/// Entries live this many ledgers at least; with ledgers of a second they never expire during a run.
pub const MIN_PERSISTENT_TTL: u32 = 2_073_600;
pub const MIN_TEMP_TTL: u32 = 17_280;
pub const MAX_ENTRY_TTL: u32 = 3_110_400;
/// Per-transaction limits (the public networks' values).
pub const TX_MAX_INSTRUCTIONS: i64 = 100_000_000;
pub const TX_MEMORY_LIMIT: u32 = 41_943_040;
/// Ledgers kept for getEvents, getTransaction and getLedgers (one week of 5 s ledgers, as Stellar RPC's default).
pub const RETENTION_WINDOW: u32 = 120_960;

/// The cost model of the host's own defaults (`Budget::default()`), which is what stellar-core's
/// initial network configuration was made from. The host exposes them only through its Debug
/// table (`const_term_cpu lin_term_cpu const_term_mem lin_term_mem` per cost type, in order), so
/// they are read from there once at start.
fn default_cost_params() -> (ContractCostParams, ContractCostParams) {
    let table = format!("{:?}", Budget::default());
    let names: Vec<String> = ContractCostType::variants().iter().map(|ty| format!("{ty:?}")).collect();
    let mut cpu = Vec::new();
    let mut mem = Vec::new();
    for name in &names {
        let line = table
            .lines()
            .find(|line| line.split_whitespace().next() == Some(name.as_str()))
            .unwrap_or_else(|| panic!("the host's budget table lacks cost type {name}"));
        let columns: Vec<&str> = line.split_whitespace().collect();
        let last4: Vec<i64> = columns[columns.len() - 4..]
            .iter()
            .map(|value| value.parse().unwrap_or_else(|_| panic!("unparsable cost for {name}: {line}")))
            .collect();
        cpu.push(ContractCostParamEntry { ext: ExtensionPoint::V0, const_term: last4[0], linear_term: last4[1] });
        mem.push(ContractCostParamEntry { ext: ExtensionPoint::V0, const_term: last4[2], linear_term: last4[3] });
    }
    (
        ContractCostParams(cpu.try_into().expect("cost params fit")),
        ContractCostParams(mem.try_into().expect("cost params fit")),
    )
}

/// The network configuration simulation and execution both use (testnet-like fee rates).
pub fn network_config() -> NetworkConfig {
    let (cpu_cost_params, memory_cost_params) = default_cost_params();
    NetworkConfig {
        fee_configuration: FeeConfiguration {
            fee_per_instruction_increment: 25,
            fee_per_disk_read_entry: 6_250,
            fee_per_write_entry: 10_000,
            fee_per_disk_read_1kb: 1_786,
            fee_per_write_1kb: 3_500,
            fee_per_historical_1kb: 16_235,
            fee_per_contract_event_1kb: 10_000,
            fee_per_transaction_size_1kb: 1_624,
        },
        rent_fee_configuration: RentFeeConfiguration {
            fee_per_write_1kb: 3_500,
            fee_per_rent_1kb: 1_000,
            fee_per_write_entry: 10_000,
            persistent_rent_rate_denominator: 1_402,
            temporary_rent_rate_denominator: 2_804,
        },
        tx_max_instructions: TX_MAX_INSTRUCTIONS,
        tx_memory_limit: TX_MEMORY_LIMIT,
        cpu_cost_params,
        memory_cost_params,
        min_temp_entry_ttl: MIN_TEMP_TTL,
        min_persistent_entry_ttl: MIN_PERSISTENT_TTL,
        max_entry_ttl: MAX_ENTRY_TTL,
    }
}
