/**
 * The Docker Compose form of an exported network: one service per process of `svc devnet up`
 * (execution-I, beacon-I, and validators-I holding node I's keys, or validator-V per validator
 * with `--validator-processes per-validator`) plus the genesis step, and Prometheus and Grafana
 * in the `monitoring` profile. Start
 * order is depends_on with `service_completed_successfully` (genesis) and `service_healthy`
 * (execution before its beacon, a beacon before its validators), each health check probing the
 * same URL the devnet supervisor waits on.
 */
import { CONTAINER_PATHS, CONTAINER_PORTS, type Addressing, ExportError, type ExportNetwork, HEALTH_PATHS, LIGHT_ENV, SECRET_NAMES, type SecretName, exportPacking, genesisStepArgs, healthcheckCommand, nodeCommands, nodeKeystoreDir, secretPath, validatorCommand } from './model.js';
import type { ValidatorKeySource } from '../plan.js';
import { GRAFANA_IMAGE, PROMETHEUS_IMAGE, scrapeTargetsFor } from './monitoring.js';

/** A Compose service, as far as the export uses the specification. */
export interface ComposeService {
  image: string;
  /** Absent: the image's own command. */
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  secrets?: SecretName[];
  ports?: string[];
  depends_on?: Record<string, { condition: 'service_completed_successfully' | 'service_healthy' | 'service_started' }>;
  healthcheck?: { test: string[]; interval: string; timeout: string; retries: number; start_period: string };
  restart?: 'no' | 'unless-stopped' | 'on-failure';
  /** Started only when one of them is enabled (`docker compose --profile NAME up`). */
  profiles?: string[];
}

/** A Compose file. */
export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes: Record<string, Record<string, never>>;
  secrets: Record<string, { file: string }>;
}

/** Service names: one per devnet process, node I's as on `svc devnet up` with the index always spelled out. */
export const composeNames = {
  execution: (i: number) => `execution-${i}`,
  beacon: (i: number) => `beacon-${i}`,
  validator: (v: number) => `validator-${v}`,
  /** Node I's packed validator client (`--validator-processes per-node`). */
  validators: (i: number) => `validators-${i}`,
  genesis: 'genesis',
  prometheus: 'prometheus',
  grafana: 'grafana',
} as const;

/**
 * The profile of Prometheus and Grafana: a plain `docker compose up` needs only the svc image;
 * `docker compose --profile monitoring up` adds them.
 */
export const COMPOSE_MONITORING_PROFILE = 'monitoring';

/** Every service is reached by its name on the Compose network; a beacon reaches its execution by that service's name. */
export const composeAddressing: Addressing = {
  executionHost: composeNames.execution,
  beaconHost: composeNames.beacon,
  ownExecutionHost: composeNames.execution,
};

/** Where the Compose file finds the secret files and monitoring files, relative to itself. */
export const COMPOSE_FILES = { secrets: './secrets', monitoring: './monitoring' } as const;

/** The Compose service serving validator `v`'s metrics: its node's packed client, or its own. */
export function composeValidatorHost(net: ExportNetwork): (validator: number, node: number) => string {
  return exportPacking(net.options) === 'per-node' ? (_v, node) => composeNames.validators(node) : (v) => composeNames.validator(v);
}

function health(port: number, path: string): ComposeService['healthcheck'] {
  return { test: ['CMD', ...healthcheckCommand(`http://127.0.0.1:${port}${path}`)], interval: '5s', timeout: '3s', retries: 5, start_period: '60s' };
}

/** The Compose file of `net`. Node 0 publishes its APIs on the host's loopback, so `svc` commands there reach it. */
export function composeFile(net: ExportNetwork): ComposeFile {
  const image = net.options.image;
  const g = CONTAINER_PATHS.genesisDir;
  const services: Record<string, ComposeService> = {};
  const volumes: Record<string, Record<string, never>> = { genesis: {} };
  services[composeNames.genesis] = {
    image,
    command: genesisStepArgs(net, g, secretPath('keystore-password')),
    volumes: [`genesis:${g}`],
    secrets: ['keystore-password'],
    restart: 'no',
  };
  const genesisDone = { [composeNames.genesis]: { condition: 'service_completed_successfully' as const } };
  for (const node of net.nodes) {
    const cmd = nodeCommands(net, node, composeAddressing, 'devnet');
    const exec = composeNames.execution(node.index);
    const beacon = composeNames.beacon(node.index);
    volumes[exec] = {};
    volumes[beacon] = {};
    const first = node.index === 0;
    services[exec] = {
      image,
      command: cmd.execution,
      volumes: [`genesis:${g}:ro`, `${exec}:${CONTAINER_PATHS.dataDir}`],
      secrets: ['engine-jwt', 'keystore-password'],
      ...(first ? { ports: [`127.0.0.1:${CONTAINER_PORTS.rest}:${CONTAINER_PORTS.rest}`, `127.0.0.1:${CONTAINER_PORTS.rpc}:${CONTAINER_PORTS.rpc}`] } : {}),
      depends_on: genesisDone,
      healthcheck: health(CONTAINER_PORTS.rest, HEALTH_PATHS.execution),
      restart: 'unless-stopped',
    };
    services[beacon] = {
      image,
      command: cmd.beacon,
      environment: { ...LIGHT_ENV },
      volumes: [`genesis:${g}:ro`, `${beacon}:${CONTAINER_PATHS.dataDir}`],
      secrets: node.role === 'producer' ? ['engine-jwt', 'validator-token'] : ['engine-jwt'],
      ...(first ? { ports: [`127.0.0.1:${CONTAINER_PORTS.beacon}:${CONTAINER_PORTS.beacon}`] } : {}),
      depends_on: { ...genesisDone, [exec]: { condition: 'service_healthy' } },
      healthcheck: health(CONTAINER_PORTS.beacon, HEALTH_PATHS.beacon),
      restart: 'unless-stopped',
    };
    const clients: Array<{ name: string; keys: ValidatorKeySource }> =
      exportPacking(net.options) === 'per-node'
        ? node.validators.length > 0
          ? [{ name: composeNames.validators(node.index), keys: { keystoresDir: nodeKeystoreDir(g, node.index) } }]
          : []
        : node.validators.map((v) => ({ name: composeNames.validator(v), keys: { keystores: [`${g}/keystores/validator-${v}.json`] } }));
    for (const { name, keys } of clients) {
      volumes[name] = {};
      services[name] = {
        image,
        command: validatorCommand(node, composeAddressing, keys),
        environment: { ...LIGHT_ENV },
        volumes: [`genesis:${g}:ro`, `${name}:${CONTAINER_PATHS.dataDir}`],
        // No engine secret: the beacon builds the blocks, the validator never calls the engine API.
        secrets: ['keystore-password', 'validator-token'],
        depends_on: { ...genesisDone, [beacon]: { condition: 'service_healthy' } },
        healthcheck: health(CONTAINER_PORTS.validatorMetrics, HEALTH_PATHS.validator),
        restart: 'unless-stopped',
      };
    }
  }
  const m = COMPOSE_FILES.monitoring;
  volumes.prometheus = {};
  services[composeNames.prometheus] = {
    image: PROMETHEUS_IMAGE,
    command: ['--config.file=/etc/prometheus/prometheus.yml', '--storage.tsdb.path=/prometheus', '--web.listen-address=0.0.0.0:9090'],
    volumes: [`${m}/prometheus.yml:/etc/prometheus/prometheus.yml:ro`, `${m}/alerts.yml:/etc/prometheus/alerts.yml:ro`, 'prometheus:/prometheus'],
    ports: ['127.0.0.1:9090:9090'],
    profiles: [COMPOSE_MONITORING_PROFILE],
    depends_on: Object.fromEntries(scrapeTargetsFor(net, composeAddressing, composeValidatorHost(net)).map((t) => [t.target.split(':')[0]!, { condition: 'service_started' as const }])),
    restart: 'unless-stopped',
  };
  services[composeNames.grafana] = {
    image: GRAFANA_IMAGE,
    environment: { GF_AUTH_ANONYMOUS_ENABLED: 'true', GF_AUTH_ANONYMOUS_ORG_ROLE: 'Viewer' },
    volumes: [`${m}/grafana/provisioning:/etc/grafana/provisioning:ro`, `${m}/grafana/dashboards:/var/lib/grafana/dashboards:ro`],
    ports: ['127.0.0.1:3000:3000'],
    profiles: [COMPOSE_MONITORING_PROFILE],
    depends_on: { [composeNames.prometheus]: { condition: 'service_started' } },
    restart: 'unless-stopped',
  };
  // No top-level `name`: the specification schema this is validated against predates it; the
  // project is named after the directory, or by `docker compose -p`.
  const file: ComposeFile = {
    services,
    volumes,
    secrets: Object.fromEntries(SECRET_NAMES.map((s) => [s, { file: `${COMPOSE_FILES.secrets}/${s}` }])),
  };
  checkComposeReferences(file);
  return file;
}

/**
 * What the Compose schema cannot see and `docker compose` refuses only when run: every named
 * volume, secret and depends_on target a service uses is declared, and the genesis service
 * exists. Throws EXPORT_INVALID naming the field.
 */
export function checkComposeReferences(file: ComposeFile): void {
  const fail = (field: string, why: string) => new ExportError('EXPORT_INVALID', `${field}: ${why}`);
  for (const [name, s] of Object.entries(file.services)) {
    (s.volumes ?? []).forEach((v, i) => {
      const source = v.split(':')[0]!;
      // Bind mounts start with . or /; anything else names a volume.
      if (!source.startsWith('.') && !source.startsWith('/') && !(source in file.volumes)) throw fail(`services.${name}.volumes[${i}]`, `volume "${source}" is not declared under volumes`);
    });
    (s.secrets ?? []).forEach((sec, i) => {
      if (!(sec in file.secrets)) throw fail(`services.${name}.secrets[${i}]`, `secret "${sec}" is not declared under secrets`);
    });
    for (const dep of Object.keys(s.depends_on ?? {})) {
      if (!(dep in file.services)) throw fail(`services.${name}.depends_on.${dep}`, `no service "${dep}"`);
      if (dep === name) throw fail(`services.${name}.depends_on.${dep}`, 'a service cannot depend on itself');
    }
    if (s.image === '') throw fail(`services.${name}.image`, 'must not be empty');
  }
  if (!(composeNames.genesis in file.services)) throw fail('services.genesis', 'the genesis step is missing');
}
