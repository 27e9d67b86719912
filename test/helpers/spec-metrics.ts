/** The metric names SPEC.md "Metrics" lists, for tests that check an endpoint serves them. */

/** SPEC.md "Metrics": beacon, execution, canonical encoding and P2P names. */
export const SPEC_METRICS = [
  'service_beacon_current_slot',
  'service_beacon_current_epoch',
  'service_beacon_finalized_epoch',
  'service_beacon_active_validators',
  'service_beacon_total_validators',
  'service_beacon_blocks_proposed_total',
  'service_beacon_blocks_finalized_total',
  'service_beacon_attestations_received_total',
  'service_beacon_attestation_pool_size',
  'service_beacon_peer_count',
  'service_execution_chain_height',
  'service_execution_accounts_total',
  'service_execution_transactions_processed_total',
  'service_execution_mempool_size',
  'service_execution_transactions_rejected_total',
  'service_execution_gas_fees_collected_wei',
  'service_execution_gas_used_total',
  'service_execution_peer_count',
  'quantum_canonical_sig_verify_ms',
  'quantum_canonical_sig_verified_total',
  'quantum_canonical_sig_fail_total',
  'quantum_canonical_vrf_verify_ms',
  'quantum_canonical_vrf_fail_total',
  'quantum_canonical_bytes_len',
  'quantum_canonical_sig_generated_total',
  'quantum_domain_hash_cache_hits',
  'service_p2p_messages_sent_total',
  'service_p2p_messages_received_total',
  'service_p2p_peer_connections_active',
  'service_p2p_peer_discovery_total',
  'service_p2p_kyber_handshakes_total',
  'service_p2p_encrypted_bytes_total',
];

/** The ones execution serves: its own and the canonical-encoding metrics. */
export const SPEC_EXECUTION_METRICS = SPEC_METRICS.filter((n) => n.startsWith('service_execution_') || n.startsWith('quantum_'));
