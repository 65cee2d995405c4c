import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { declaredPhasesOf, ownerKindsOf } from '../../../src/declared-phases.ts';

function load(yaml: string): ReturnType<typeof loadConfig> {
  const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-owners-'));
  writeFileSync(path.join(dir, 'phaselog.yaml'), yaml);
  return loadConfig({}, dir);
}

function issuesOf(yaml: string): string[] {
  try {
    load(yaml);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.key}: ${i.message}`);
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('phases.owners', () => {
  it('reads owner kinds and keeps declared phases beside them', () => {
    const config = load(`
phases:
  declared:
    - { cluster: prod, name: infra, resources: [shop_web_apps_Deployment] }
  owners:
    - kind: openstacklcm.airshipit.org/OsPhase
      ownedKinds: [batch/Job, Pod, argoproj.io/Workflow, helm.toolkit.fluxcd.io/HelmRelease]
`);
    expect(ownerKindsOf(config.phases)).toEqual([
      {
        kind: { group: 'openstacklcm.airshipit.org', kind: 'OsPhase' },
        ownedKinds: [
          { group: 'batch', kind: 'Job' },
          { group: '', kind: 'Pod' },
          { group: 'argoproj.io', kind: 'Workflow' },
          { group: 'helm.toolkit.fluxcd.io', kind: 'HelmRelease' },
        ],
        // The owner's condition recorded as owner/Ready and read for its verdict.
        readyCondition: 'Ready',
      },
    ]);
    expect(declaredPhasesOf(config.phases).map((p) => p.name)).toEqual(['infra']);
  });

  it('takes a readyCondition per owner kind and refuses one that is not a condition type', () => {
    const config = load(`
phases:
  owners:
    - kind: lcm.example.dev/Phase
      ownedKinds: [batch/Job]
      readyCondition: Completed
`);
    expect(ownerKindsOf(config.phases)[0]?.readyCondition).toBe('Completed');
    expect(
      issuesOf(`
phases:
  owners:
    - kind: lcm.example.dev/Phase
      ownedKinds: [batch/Job]
      readyCondition: "Ready/../x"
`),
    ).toEqual([expect.stringMatching(/^phases\.owners\.0\.readyCondition: a condition type/)]);
  });

  it('the list form of phases still works and has no owners', () => {
    const config = load('phases:\n  - { cluster: prod, name: infra, resources: [shop_web_apps_Deployment] }\n');
    expect(declaredPhasesOf(config.phases).map((p) => p.name)).toEqual(['infra']);
    expect(ownerKindsOf(config.phases)).toEqual([]);
  });

  it.each([
    [
      'a kind with two slashes',
      'kind: a/b/OsPhase\n    ownedKinds: [batch/Job]',
      'phases.owners.0.kind: "a/b/OsPhase" is not a kind',
    ],
    [
      'a lower-case kind',
      'kind: openstacklcm.airshipit.org/osphase\n    ownedKinds: [batch/Job]',
      'phases.owners.0.kind: "openstacklcm.airshipit.org/osphase" is not a kind',
    ],
    [
      'an owned kind that is no kind',
      'kind: lcm.example.dev/Phase\n    ownedKinds: [batch/]',
      'phases.owners.0.ownedKinds.0: "batch/" is not a kind',
    ],
    [
      'no owned kinds',
      'kind: lcm.example.dev/Phase\n    ownedKinds: []',
      'phases.owners.0.ownedKinds: name at least one owned kind',
    ],
    [
      'an owner owning its own kind',
      'kind: lcm.example.dev/Phase\n    ownedKinds: [lcm.example.dev/Phase]',
      'phases.owners.0.ownedKinds: an owner kind cannot own its own kind',
    ],
    ['an unknown key', 'kind: lcm.example.dev/Phase\n    ownedKinds: [Pod]\n    selector: {}', 'phases.owners.0'],
  ])('refuses %s', (_name, entry, expected) => {
    const issues = issuesOf(`phases:\n  owners:\n  - ${entry}\n`);
    expect(issues.some((i) => i.startsWith(expected))).toBe(true);
  });

  it('refuses the same owner kind twice', () => {
    const issues = issuesOf(
      'phases:\n  owners:\n  - { kind: lcm.example.dev/Phase, ownedKinds: [Pod] }\n  - { kind: lcm.example.dev/Phase, ownedKinds: [batch/Job] }\n',
    );
    expect(issues).toContain('phases.owners.1.kind: owner kind lcm.example.dev/Phase is configured twice');
  });
});
