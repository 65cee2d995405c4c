#!/usr/bin/env node
// The container's HEALTHCHECK: healthy when this container's listener answers /healthz, whichever
// role it runs: the API (and `start`) on PHASELOG_PORT, a worker on PHASELOG_PROBE_PORT. One image
// serves both roles and a health check cannot see the command, so it asks both ports; a container
// runs one role, so only its own listener can answer. Exit 0 healthy, 1 not (Docker's contract).
const host = ['', '0.0.0.0', '::', undefined].includes(process.env.PHASELOG_HOST)
  ? '127.0.0.1'
  : process.env.PHASELOG_HOST;
const ports = [process.env.PHASELOG_PORT ?? '4000', process.env.PHASELOG_PROBE_PORT].filter(
  (port) => port !== undefined && port !== '',
);
const hostPart = host.includes(':') ? `[${host}]` : host;

async function healthy(port) {
  try {
    const res = await fetch(`http://${hostPart}:${port}/healthz`, { signal: AbortSignal.timeout(2500) });
    return res.ok;
  } catch {
    return false;
  }
}

const answers = await Promise.all(ports.map(healthy));
process.exit(answers.includes(true) ? 0 : 1);
