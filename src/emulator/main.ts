/**
 * Standalone emulator: `npm run emulator -- --port 6443 --kubeconfig ./emulator.kubeconfig --load file.yaml`.
 * Writes a kubeconfig, serves until SIGINT/SIGTERM, then closes cleanly.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startEmulator, type EmulatorOptions } from './index.ts';

const USAGE = `Usage: npm run emulator -- [options]
  --port <n>           port to listen on (default 6443; 0 = any free port)
  --host <addr>        interface to bind (default 127.0.0.1)
  --kubeconfig <path>  write a kubeconfig for this server (default ./emulator.kubeconfig)
  --load <file>        YAML/JSON manifests to load at start (repeatable)
  --token <token>      require this bearer token
  --tls                serve HTTPS with a self-signed certificate (needs openssl)
  --context <name>     context/cluster name in the kubeconfig (default emulated)
  --help               show this text`;

/** Runs the CLI; resolves with the process exit code once the server has stopped. */
export async function runEmulatorCli(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string', default: '6443' },
        host: { type: 'string', default: '127.0.0.1' },
        kubeconfig: { type: 'string', default: './emulator.kubeconfig' },
        load: { type: 'string', multiple: true, default: [] },
        token: { type: 'string' },
        tls: { type: 'boolean', default: false },
        context: { type: 'string', default: 'emulated' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be an integer between 0 and 65535, got "${values.port}"`);
    return 2;
  }
  const options: EmulatorOptions = { port, host: values.host, tls: values.tls, clusterName: values.context };
  if (values.token !== undefined) options.token = values.token;
  let emulator;
  try {
    emulator = await startEmulator(options);
  } catch (e) {
    console.error(`cannot start the emulator: ${(e as Error).message}`);
    return 1;
  }
  try {
    for (const file of values.load) console.log(`loaded ${await emulator.loadFile(file)} objects from ${file}`);
    await emulator.writeKubeconfig(values.kubeconfig);
  } catch (e) {
    console.error((e as Error).message);
    await emulator.close();
    return 1;
  }
  console.log(`Kubernetes API emulator listening on ${emulator.url}`);
  console.log(`kubeconfig written to ${values.kubeconfig}; try: kubectl --kubeconfig ${values.kubeconfig} get namespaces`);
  console.log('Press Ctrl-C to stop.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await emulator.close();
  console.log('emulator stopped');
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await runEmulatorCli(process.argv.slice(2));
}
