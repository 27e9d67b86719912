/**
 * The Kubernetes form of an exported network, in the shape of ethpandaops' charts: the genesis
 * step as a Job writing a shared volume; producers and followers as two StatefulSets (execution
 * and beacon containers in one pod, so the beacon reaches its execution on loopback) behind
 * headless Services; the validators of producer N as StatefulSet svc-validator-N (one pod holding
 * all of the node's keys, or with `--validator-processes per-validator` a pod per key). A pod finds its
 * index from its ordinal (the `apps.kubernetes.io/pod-index` label, Kubernetes 1.28+) and with it
 * its P2P key and keystore on the genesis volume. Probes use the health URLs the devnet
 * supervisor waits on; memory requests come from the devnet's measured RSS (model.ts).
 */
import { CONTAINER_PATHS, CONTAINER_PORTS, type Addressing, ExportError, type ExportNetwork, type ExportNode, HEALTH_PATHS, IMAGE_USER, LIGHT_ENV, SECRET_NAMES, exportPacking, genesisStepArgs, memoryRequestMib, nodeCommands, nodeKeystoreDir, nodeKeystoreFile, secretPath, validatorCommand } from './model.js';
import { GRAFANA_DASHBOARDS_DIR, GRAFANA_IMAGE, PROMETHEUS_IMAGE, exportPrometheusConfig, grafanaDashboardProvider, grafanaDatasource, scrapeTargetsFor } from './monitoring.js';

/** A Kubernetes object as plain data (kubernetes-models validates the same shape in the tests). */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** One manifest file: its name (apply order) and object. */
export interface K8sManifest {
  file: string;
  object: K8sObject;
}

/** Files the exported monitoring reads, by ConfigMap key (filled from the shipped files by the caller). */
export interface ShippedMonitoring {
  alerts: string;
  dashboard: string;
}

/** Resource names. */
export const k8sNames = {
  secret: 'svc-secrets',
  genesis: 'svc-genesis',
  producer: 'svc-producer',
  follower: 'svc-follower',
  validators: 'svc-validator',
  validatorSet: (node: number) => `svc-validator-${node}`,
  prometheus: 'svc-prometheus',
  grafana: 'svc-grafana',
} as const;

/** Environment variable holding the pod's ordinal. */
export const ORDINAL_ENV = 'SVC_ORDINAL';
const ORDINAL = `$(${ORDINAL_ENV})`;
const APP_LABEL = 'app.kubernetes.io/part-of';
const COMPONENT_LABEL = 'app.kubernetes.io/component';

/** Pod DNS names through the headless Services (namespace-relative: the pods' resolver search path completes them). */
function nodeHost(net: ExportNetwork, i: number): string {
  const n = net.nodes[i]!;
  const set = n.role === 'producer' ? k8sNames.producer : k8sNames.follower;
  return `${set}-${n.ordinal}.${set}`;
}

/** Execution and beacon share a pod: other pods reach both by the pod's name, the beacon its execution on loopback. */
function addressing(net: ExportNetwork): Addressing {
  return { executionHost: (i) => nodeHost(net, i), beaconHost: (i) => nodeHost(net, i), ownExecutionHost: () => '127.0.0.1' };
}

function labels(component: string): Record<string, string> {
  return { [APP_LABEL]: 'svc-devnet', [COMPONENT_LABEL]: component };
}

const ordinalEnv = { name: ORDINAL_ENV, valueFrom: { fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" } } };

function probe(port: number, path: string, liveness: boolean): Record<string, unknown> {
  // Liveness is lenient (a beacon catching up, or execution during a long import, answers late);
  // readiness gates traffic and the next start only.
  return { httpGet: { path, port }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: liveness ? 12 : 3, ...(liveness ? { initialDelaySeconds: 30 } : {}) };
}

function resources(kind: 'execution' | 'beacon' | 'validator', keys = 1): Record<string, unknown> {
  const mib = memoryRequestMib(kind, keys);
  return { requests: { memory: `${mib}Mi`, cpu: '100m' }, limits: { memory: `${mib * 2}Mi` } };
}

/** Mode of the mounted Secret's files: owner and group read (the group is the pod's fsGroup). */
export const SECRET_VOLUME_MODE = 0o440;

const genesisMount = (readOnly: boolean) => ({ name: 'genesis', mountPath: CONTAINER_PATHS.genesisDir, readOnly });
const secretsMount = { name: 'secrets', mountPath: CONTAINER_PATHS.secretsDir, readOnly: true };
const dataMount = { name: 'data', mountPath: CONTAINER_PATHS.dataDir };
const podVolumes = [
  { name: 'genesis', persistentVolumeClaim: { claimName: k8sNames.genesis } },
  // Owned by root and the pod's fsGroup (the image's group): readable by the image's user, no one else's.
  { name: 'secrets', secret: { secretName: k8sNames.secret, defaultMode: SECRET_VOLUME_MODE } },
];
/** The image's `node` user: files on the volumes belong to it. */
const podSecurity = { runAsNonRoot: true, runAsUser: IMAGE_USER.uid, runAsGroup: IMAGE_USER.gid, fsGroup: IMAGE_USER.gid };

function claim(size: string): Record<string, unknown> {
  return { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } } };
}

function headless(name: string, component: string, ports: Array<{ name: string; port: number }>): K8sObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, labels: labels(component) },
    // Peers dial each other before they are ready (a node waits for peers to sync), so DNS lists every pod.
    spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: labels(component), ports: ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.port })) },
  };
}

function nodeSet(net: ExportNetwork, role: ExportNode['role'], image: string): K8sObject[] {
  const members = net.nodes.filter((n) => n.role === role);
  if (members.length === 0) return [];
  const name = role === 'producer' ? k8sNames.producer : k8sNames.follower;
  // One command for every pod: the ordinal picks the key; every node is a bootnode (a host skips its own entry).
  const cmd = nodeCommands(net, members[0]!, addressing(net), 'all', ORDINAL);
  const p = CONTAINER_PORTS;
  return [
    headless(name, role, [
      { name: 'rest', port: p.rest },
      { name: 'rpc', port: p.rpc },
      { name: 'beacon', port: p.beacon },
      { name: 'p2p-beacon', port: p.beaconP2p },
      { name: 'p2p-execution', port: p.executionP2p },
    ]),
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name, labels: labels(role) },
      spec: {
        serviceName: name,
        replicas: members.length,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: labels(role) },
        template: {
          metadata: { labels: labels(role) },
          spec: {
            securityContext: podSecurity,
            containers: [
              {
                name: 'execution',
                image,
                args: cmd.execution,
                env: [ordinalEnv],
                ports: [
                  { name: 'rest', containerPort: p.rest },
                  { name: 'rpc', containerPort: p.rpc },
                  { name: 'p2p-execution', containerPort: p.executionP2p },
                ],
                volumeMounts: [genesisMount(true), secretsMount, { ...dataMount, subPath: 'execution', mountPath: `${CONTAINER_PATHS.dataDir}/execution` }],
                readinessProbe: probe(p.rest, HEALTH_PATHS.execution, false),
                livenessProbe: probe(p.rest, HEALTH_PATHS.execution, true),
                resources: resources('execution'),
              },
              {
                name: 'beacon',
                image,
                args: cmd.beacon,
                env: [ordinalEnv, ...Object.entries(LIGHT_ENV).map(([k, v]) => ({ name: k, value: v }))],
                ports: [
                  { name: 'beacon', containerPort: p.beacon },
                  { name: 'p2p-beacon', containerPort: p.beaconP2p },
                ],
                volumeMounts: [genesisMount(true), secretsMount, { ...dataMount, subPath: 'beacon', mountPath: `${CONTAINER_PATHS.dataDir}/beacon` }],
                readinessProbe: probe(p.beacon, HEALTH_PATHS.beacon, false),
                livenessProbe: probe(p.beacon, HEALTH_PATHS.beacon, true),
                resources: resources('beacon'),
              },
            ],
            volumes: podVolumes,
          },
        },
        volumeClaimTemplates: [claim('2Gi')],
      },
    },
  ];
}

function validatorSet(net: ExportNetwork, node: ExportNode, image: string): K8sObject {
  const name = k8sNames.validatorSet(node.index);
  const packed = exportPacking(net.options) === 'per-node';
  const g = CONTAINER_PATHS.genesisDir;
  const component = 'validator';
  const podLabels = { ...labels(component), 'svc.dev/node': String(node.index) };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, labels: podLabels },
    spec: {
      serviceName: k8sNames.validators,
      replicas: packed ? 1 : node.validators.length,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: podLabels },
      template: {
        metadata: { labels: podLabels },
        spec: {
          securityContext: podSecurity,
          containers: [
            {
              name: 'validator',
              image,
              args: validatorCommand(node, addressing(net), packed ? { keystoresDir: nodeKeystoreDir(g, node.index) } : { keystores: [nodeKeystoreFile(g, node.index, ORDINAL)] }),
              env: [ordinalEnv, ...Object.entries(LIGHT_ENV).map(([k, v]) => ({ name: k, value: v }))],
              ports: [{ name: 'metrics', containerPort: CONTAINER_PORTS.validatorMetrics }],
              volumeMounts: [genesisMount(true), secretsMount, dataMount],
              readinessProbe: probe(CONTAINER_PORTS.validatorMetrics, HEALTH_PATHS.validator, false),
              livenessProbe: probe(CONTAINER_PORTS.validatorMetrics, HEALTH_PATHS.validator, true),
              resources: resources('validator', packed ? node.validators.length : 1),
            },
          ],
          volumes: podVolumes,
        },
      },
      volumeClaimTemplates: [claim('256Mi')],
    },
  };
}

function monitoring(net: ExportNetwork, shipped: ShippedMonitoring): K8sObject[] {
  const at = addressing(net);
  const packed = exportPacking(net.options) === 'per-node';
  const targets = scrapeTargetsFor(net, at, (v, node) => `${k8sNames.validatorSet(node)}-${packed ? 0 : net.nodes[node]!.validators.indexOf(v)}.${k8sNames.validators}`);
  const promLabels = labels('prometheus');
  const grafLabels = labels('grafana');
  const deployment = (name: string, l: Record<string, string>, container: Record<string, unknown>, volumes: unknown[]): K8sObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: l },
    spec: { replicas: 1, selector: { matchLabels: l }, template: { metadata: { labels: l }, spec: { containers: [container], volumes } } },
  });
  const service = (name: string, l: Record<string, string>, port: number): K8sObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, labels: l }, spec: { selector: l, ports: [{ name: 'http', port, targetPort: port }] } });
  return [
    headless(k8sNames.validators, 'validator', [{ name: 'metrics', port: CONTAINER_PORTS.validatorMetrics }]),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: k8sNames.prometheus, labels: promLabels }, data: { 'prometheus.yml': exportPrometheusConfig(targets, 'alerts.yml', 'Kubernetes'), 'alerts.yml': shipped.alerts } },
    deployment(
      k8sNames.prometheus,
      promLabels,
      {
        name: 'prometheus',
        image: PROMETHEUS_IMAGE,
        args: ['--config.file=/etc/prometheus/prometheus.yml', '--storage.tsdb.path=/prometheus', '--web.listen-address=0.0.0.0:9090'],
        ports: [{ name: 'http', containerPort: 9090 }],
        volumeMounts: [{ name: 'config', mountPath: '/etc/prometheus', readOnly: true }, { name: 'tsdb', mountPath: '/prometheus' }],
        readinessProbe: { httpGet: { path: '/-/ready', port: 9090 }, periodSeconds: 5 },
      },
      [{ name: 'config', configMap: { name: k8sNames.prometheus } }, { name: 'tsdb', emptyDir: {} }],
    ),
    service(k8sNames.prometheus, promLabels, 9090),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: k8sNames.grafana, labels: grafLabels },
      data: { 'datasource.yml': grafanaDatasource(`http://${k8sNames.prometheus}:9090`), 'dashboards.yml': grafanaDashboardProvider(), 'svc-dashboard.json': shipped.dashboard },
    },
    deployment(
      k8sNames.grafana,
      grafLabels,
      {
        name: 'grafana',
        image: GRAFANA_IMAGE,
        env: [
          { name: 'GF_AUTH_ANONYMOUS_ENABLED', value: 'true' },
          { name: 'GF_AUTH_ANONYMOUS_ORG_ROLE', value: 'Viewer' },
        ],
        ports: [{ name: 'http', containerPort: 3000 }],
        volumeMounts: [
          { name: 'grafana', mountPath: '/etc/grafana/provisioning/datasources/datasource.yml', subPath: 'datasource.yml', readOnly: true },
          { name: 'grafana', mountPath: '/etc/grafana/provisioning/dashboards/dashboards.yml', subPath: 'dashboards.yml', readOnly: true },
          { name: 'grafana', mountPath: `${GRAFANA_DASHBOARDS_DIR}/svc-dashboard.json`, subPath: 'svc-dashboard.json', readOnly: true },
        ],
        readinessProbe: { httpGet: { path: '/api/health', port: 3000 }, periodSeconds: 5 },
      },
      [{ name: 'grafana', configMap: { name: k8sNames.grafana } }],
    ),
    service(k8sNames.grafana, grafLabels, 3000),
  ];
}

/**
 * Every manifest of `net`, numbered in apply order (`kubectl apply -f DIR` takes files by name):
 * Secret and genesis volume, the genesis Job, nodes, validators, monitoring. `secrets` are the
 * values of SECRET_NAMES.
 */
export function k8sManifests(net: ExportNetwork, secrets: Readonly<Record<(typeof SECRET_NAMES)[number], string>>, shipped: ShippedMonitoring): K8sManifest[] {
  const image = net.options.image;
  const objects: K8sObject[] = [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: k8sNames.secret, labels: labels('secrets') }, type: 'Opaque', stringData: Object.fromEntries(SECRET_NAMES.map((s) => [s, secrets[s]])) },
    // ReadWriteOnce serves every pod on a one-node cluster (kind, minikube); use a ReadWriteMany class on several nodes (docs/deploy.md).
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: k8sNames.genesis, labels: labels('genesis') }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '256Mi' } } } },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: k8sNames.genesis, labels: labels('genesis') },
      spec: {
        backoffLimit: 3,
        template: {
          metadata: { labels: labels('genesis') },
          spec: {
            restartPolicy: 'OnFailure',
            securityContext: podSecurity,
            containers: [{ name: 'genesis', image, args: genesisStepArgs(net, CONTAINER_PATHS.genesisDir, secretPath('keystore-password')), volumeMounts: [genesisMount(false), secretsMount] }],
            volumes: podVolumes,
          },
        },
      },
    },
    ...nodeSet(net, 'producer', image),
    ...nodeSet(net, 'follower', image),
    ...net.nodes.filter((n) => n.role === 'producer').map((n) => validatorSet(net, n, image)),
    ...monitoring(net, shipped),
  ];
  for (const o of objects) checkK8sReferences(o);
  return objects.map((object, i) => ({ file: `${String(i).padStart(2, '0')}-${object.kind.toLowerCase()}-${object.metadata.name}.json`, object }));
}

interface PodSpecLike {
  containers?: Array<{ name?: string; volumeMounts?: Array<{ name?: string }> }>;
  volumes?: Array<{ name?: string }>;
}

/**
 * What the API schemas cannot see and the API server refuses only when applied: a workload's
 * replica count is a positive integer, and every volumeMount names a volume of its pod or a claim
 * template. Throws EXPORT_INVALID naming the field.
 */
export function checkK8sReferences(o: K8sObject): void {
  const where = `${o.kind}/${o.metadata.name}`;
  const spec = o.spec as { replicas?: unknown; template?: { spec?: PodSpecLike }; volumeClaimTemplates?: Array<{ metadata?: { name?: string } }> } | undefined;
  if (!spec || !['StatefulSet', 'Deployment', 'Job'].includes(o.kind)) return;
  if (o.kind !== 'Job' && (typeof spec.replicas !== 'number' || !Number.isSafeInteger(spec.replicas) || spec.replicas < 1)) {
    throw new ExportError('EXPORT_INVALID', `${where} spec.replicas: must be a positive integer, got ${JSON.stringify(spec.replicas)}`);
  }
  const pod = spec.template?.spec;
  const known = new Set([...(pod?.volumes ?? []).map((v) => v.name), ...(spec.volumeClaimTemplates ?? []).map((c) => c.metadata?.name)]);
  (pod?.containers ?? []).forEach((c, ci) => {
    (c.volumeMounts ?? []).forEach((m, mi) => {
      if (!known.has(m.name)) throw new ExportError('EXPORT_INVALID', `${where} spec.template.spec.containers[${ci}].volumeMounts[${mi}]: volume "${m.name}" is not a volume or claim template of the pod`);
    });
  });
}
