/**
 * A description of the machine a benchmark ran on, recorded next to every result so that figures
 * from different machines are never compared by accident.
 */
import { cpus, totalmem, freemem, loadavg, platform, release, arch } from 'node:os';

/** The machine a run was measured on. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  freeMemoryGiB: number;
  /** 1-minute load average when the run started: other work on a shared machine skews figures. */
  loadAverage1m: number;
  node: string;
  os: string;
}

/** Reads the CPU model, core count, memory, load and Node version of this machine. */
export function describeMachine(): MachineInfo {
  const list = cpus();
  const gib = (bytes: number) => Math.round((bytes / 1024 ** 3) * 10) / 10;
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: gib(totalmem()),
    freeMemoryGiB: gib(freemem()),
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    node: process.version,
    os: `${platform()} ${release()} ${arch()}`,
  };
}
