/**
 * Loads client-node's `KubeConfig` without its generated API client.
 *
 * phaselog uses one thing from @kubernetes/client-node: `KubeConfig` (kubeconfig loading and the
 * credentials `applyToHTTPSOptions` puts on each request; see transport.ts). But the module that
 * defines it, `dist/config.js`, imports `dist/gen/index.js` for two names, and that module loads
 * the whole generated client: every API class and model of every Kubernetes group. In a worker
 * that is ~20 MB of live heap and ~40 MB of resident memory spent on code it never runs.
 *
 * {@link registerLeanClientNode} installs a module resolve hook (`module.registerHooks`, Node
 * ≥ 22.15 and ≥ 23.5) that answers that one import, from that one module, with a module exporting
 * just the two names `config.js` takes from it, loaded from their own files in the same package.
 * Any other import of client-node (its main entry included) resolves as usual. Should a new
 * client-node take another name from `gen/index.js`, loading `config.js` fails at once with a
 * SyntaxError naming it, and test/unit/kube/lean-client-node.test.ts catches that before release.
 *
 * A hook is hand-written because no bundler runs in production: phaselog ships dist/ as one file
 * per source with its packages installed (see scripts/compile.mjs), and client-node is ESM only,
 * so nothing but the loader can change what its modules import.
 */
import module from 'node:module';

/** The names client-node's `dist/config.js` imports from `./gen/index.js`, and the file each comes from. */
const NAMES_CONFIG_TAKES = {
  createConfiguration: './gen/configuration.js',
  ServerConfiguration: './gen/servers.js',
} as const;

const CONFIG_MODULE = /\/@kubernetes\/client-node\/dist\/config\.js$/;

interface ResolveContext {
  parentURL?: string;
}
interface ResolveResult {
  url: string;
  format?: string;
  shortCircuit?: boolean;
}
type RegisterHooks = (hooks: {
  resolve(
    specifier: string,
    context: ResolveContext,
    next: (specifier: string, context: ResolveContext) => ResolveResult,
  ): ResolveResult;
}) => unknown;

let registered = false;

/** The module that stands in for `gen/index.js` when `config.js` at `configUrl` imports it. */
export function leanGenIndexUrl(configUrl: string): string {
  const source = Object.entries(NAMES_CONFIG_TAKES)
    .map(([name, file]) => `export { ${name} } from ${JSON.stringify(new URL(file, configUrl).href)};`)
    .join('\n');
  return `data:text/javascript,${encodeURIComponent(source)}`;
}

/**
 * Makes later imports of client-node's `KubeConfig` skip the generated API client. Call it before
 * anything imports client-node (the process's entry does). Returns whether the hook is in place:
 * false on a Node without `module.registerHooks`, where client-node loads whole and works the same.
 * Calling it again does nothing.
 */
export function registerLeanClientNode(): boolean {
  if (registered) return true;
  const registerHooks = (module as unknown as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof registerHooks !== 'function') return false;
  registerHooks({
    resolve(specifier, context, next) {
      if (specifier === './gen/index.js' && context.parentURL !== undefined && CONFIG_MODULE.test(context.parentURL)) {
        return { url: leanGenIndexUrl(context.parentURL), format: 'module', shortCircuit: true };
      }
      return next(specifier, context);
    },
  });
  registered = true;
  return true;
}
