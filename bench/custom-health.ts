/**
 * Evaluations per second of custom health checks on realistic objects: a Flux CEL check (three
 * expressions over conditions) and an Argo CD-style Lua script, each against a Strimzi Kafka
 * resource with managed fields and a last-applied annotation, the way objects arrive from a cluster.
 * Lua time is dominated by converting the object into Lua tables (every field crosses into
 * WebAssembly), so it grows with object size; CEL reads the JavaScript object directly.
 *
 *   node --import tsx bench/custom-health.ts [--seconds 2]
 */
import { pathToFileURL } from 'node:url';
import { createHealthChecker, healthConfigSchema, loadArgoCdConfigMap } from '../src/status/custom/index.ts';

/** Options for {@link run}. */
export interface CustomHealthBenchOptions {
  /** Seconds to measure each engine. @default 2 */
  seconds?: number;
}

function buildKafka(index: number): Record<string, unknown> {
  const spec = {
    kafka: { replicas: 3, version: '3.7.0', listeners: [{ name: 'tls', port: 9093, type: 'internal', tls: true }] },
  };
  return {
    apiVersion: 'kafka.strimzi.io/v1beta2',
    kind: 'Kafka',
    metadata: {
      name: `events-${index}`,
      namespace: 'streaming',
      uid: `6f1c2a9e-0000-4000-8000-${String(index).padStart(12, '0')}`,
      resourceVersion: String(100_000 + index),
      generation: 3,
      labels: { 'app.kubernetes.io/part-of': 'events', 'kustomize.toolkit.fluxcd.io/name': 'streaming' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec }) },
      managedFields: [
        {
          manager: 'kustomize-controller',
          operation: 'Apply',
          apiVersion: 'kafka.strimzi.io/v1beta2',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:kafka': { 'f:replicas': {}, 'f:version': {} } } },
        },
        {
          manager: 'strimzi-cluster-operator',
          operation: 'Update',
          subresource: 'status',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:conditions': {}, 'f:observedGeneration': {} } },
        },
      ],
    },
    spec,
    status: {
      observedGeneration: 3,
      kafkaVersion: '3.7.0',
      replicas: 3,
      readyReplicas: index % 5 === 0 ? 2 : 3,
      listeners: [{ name: 'tls', addresses: [{ host: `events-${index}-kafka-bootstrap.streaming.svc`, port: 9093 }] }],
      conditions: [
        {
          type: 'Ready',
          status: index % 5 === 0 ? 'False' : 'True',
          lastTransitionTime: '2026-11-20T10:00:00Z',
          reason: index % 5 === 0 ? 'Reconciling' : 'Ready',
          message: '',
        },
        {
          type: 'Warning',
          status: 'True',
          reason: 'KafkaStorage',
          message:
            'A Kafka cluster with a single replica and ephemeral storage will lose topic messages after any restart or rolling update.',
        },
      ],
    },
  };
}

const LUA_SCRIPT = `local hs = { status = "Progressing", message = "Waiting for Kafka" }
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" and c.status == "True" then
      hs.status = "Healthy"
      hs.message = obj.status.readyReplicas .. "/" .. obj.spec.kafka.replicas .. " brokers ready"
    elseif c.type == "Ready" and c.status == "False" then
      hs.message = string.format("%s: %d of %d ready", c.reason or "NotReady", obj.status.readyReplicas, obj.spec.kafka.replicas)
    end
  end
end
return hs`;

function measure(
  seconds: number,
  evaluate: (i: number) => unknown,
): { perSecond: number; microsPer: number; runs: number } {
  for (let i = 0; i < 2_000; i++) evaluate(i);
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let runs = 0;
  while (performance.now() < deadline) {
    for (let i = 0; i < 500; i++) evaluate(runs + i);
    runs += 500;
  }
  const elapsed = (performance.now() - started) / 1000;
  return { perSecond: Math.round(runs / elapsed), microsPer: Number(((elapsed * 1e6) / runs).toFixed(2)), runs };
}

/** Runs the benchmark and returns its figures (evaluations per second and microseconds each). */
export async function run(options: CustomHealthBenchOptions = {}): Promise<Record<string, number | string>> {
  const seconds = options.seconds ?? 2;
  const objects = Array.from({ length: 100 }, (_, i) => buildKafka(i));
  const cel = await createHealthChecker(
    healthConfigSchema.parse({
      healthCheckExprs: [
        {
          apiVersion: 'kafka.strimzi.io/v1beta2',
          kind: 'Kafka',
          inProgress: "status.conditions.exists(c, c.type == 'Ready' && c.status == 'Unknown')",
          failed: "status.conditions.filter(c, c.type == 'Ready').all(c, c.status == 'False')",
          current:
            "status.conditions.filter(c, c.type == 'Ready').all(c, c.status == 'True') && status.readyReplicas == spec.kafka.replicas",
        },
      ],
    }),
    { baseDir: process.cwd() },
  );
  const lua = await createHealthChecker(healthConfigSchema.parse({}), {
    baseDir: process.cwd(),
    argocdConfigMaps: [
      loadArgoCdConfigMap({
        'resource.customizations.health.kafka.strimzi.io_Kafka': LUA_SCRIPT,
        'resource.customizations.useOpenLibs.kafka.strimzi.io_Kafka': 'true',
      }),
    ],
  });
  const pick = (i: number) => objects[i % objects.length] as Record<string, unknown>;
  const celFigures = measure(seconds, (i) => cel.checker.evaluate(pick(i)));
  const luaFigures = measure(seconds, (i) => lua.checker.evaluate(pick(i)));
  const sample = lua.checker.evaluate(pick(1));
  cel.checker.close();
  lua.checker.close();
  return {
    objectBytes: JSON.stringify(pick(1)).length,
    celEvaluationsPerSecond: celFigures.perSecond,
    celMicrosPerEvaluation: celFigures.microsPer,
    luaEvaluationsPerSecond: luaFigures.perSecond,
    luaMicrosPerEvaluation: luaFigures.microsPer,
    luaSampleMessage: sample?.message ?? '',
  };
}

function readSeconds(argv: string[]): number | undefined {
  const index = argv.indexOf('--seconds');
  const value = index === -1 ? undefined : Number(argv[index + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const figures = await run({ seconds: readSeconds(process.argv) });
  console.log('custom health checks (one ~%d-byte Kafka object per evaluation)', figures.objectBytes);
  console.log('engine | evaluations/s | µs/evaluation');
  console.log('------ | ------------- | -------------');
  console.log(
    `CEL    | ${String(figures.celEvaluationsPerSecond).padStart(13)} | ${String(figures.celMicrosPerEvaluation).padStart(13)}`,
  );
  console.log(
    `Lua    | ${String(figures.luaEvaluationsPerSecond).padStart(13)} | ${String(figures.luaMicrosPerEvaluation).padStart(13)}`,
  );
  console.log(`sample Lua message: ${figures.luaSampleMessage}`);
}
