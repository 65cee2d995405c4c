import { describe, expect, it } from 'vitest';
import { createLuaChecker, loadObject } from './helpers.ts';

/**
 * Scripts written for phaselog that lean on gopher-lua (Lua 5.1) behaviour Argo CD users rely on.
 * Each row: the fixture object, the folder (group/Kind), the script, and what a user would see.
 */
const cases: { name: string; object: string; folder: string; script: string; health: string; message: string }[] = [
  {
    name: 'integer fields print as integers in messages ("3/3", not "3.0/3.0")',
    object: 'kafka',
    folder: 'kafka.strimzi.io/Kafka',
    script: `return { status = "Healthy", message = obj.status.readyReplicas .. "/" .. obj.spec.kafka.replicas .. " brokers ready" }`,
    health: 'Healthy',
    message: '3/3 brokers ready',
  },
  {
    name: 'tostring and %s of an integral quotient print like gopher-lua',
    object: 'rolloutHalfway',
    folder: 'argoproj.io/Rollout',
    script: `local half = obj.spec.replicas / 2
return { status = "Progressing", message = tostring(half) .. " of " .. string.format("%s", obj.spec.replicas / 1) .. " " .. table.concat({ half, 1.5 }, ",") }`,
    health: 'Progressing',
    message: '2 of 4 2,1.5',
  },
  {
    name: 'string.format %d truncates a non-integer instead of failing',
    object: 'rolloutHalfway',
    folder: 'argoproj.io/Rollout',
    script: `local pct = obj.status.updatedReplicas * 100 / 3
return { status = "Progressing", message = string.format("%d%% updated, %d available", pct, obj.status.availableReplicas) }`,
    health: 'Progressing',
    message: '66% updated, 3 available',
  },
  {
    name: 'JSON null fields are nil and null list items are skipped',
    object: 'certificateWithNulls',
    folder: 'cert-manager.io/Certificate',
    script: `local names = obj.spec.dnsNames
local msg = tostring(obj.status.renewalTime == nil) .. " " .. tostring(obj.metadata.annotations == nil) .. " " .. #names .. " " .. names[2]
return { status = "Progressing", message = msg }`,
    health: 'Progressing',
    message: 'true true 2 www.shop.example.com',
  },
  {
    name: 'goto continue skips conditions that are not Ready',
    object: 'certificateWithNulls',
    folder: 'cert-manager.io/Certificate',
    script: `local hs = { status = "Healthy", message = "" }
for _, c in ipairs(obj.status.conditions) do
  if c.type ~= "Ready" then goto continue end
  if c.status == "False" then hs.status = "Degraded"; hs.message = c.reason .. ": " .. c.message end
  ::continue::
end
return hs`,
    health: 'Degraded',
    message: 'Issuing: Issuing certificate as Secret does not exist',
  },
  {
    name: 'table.getn, unpack and math.pow from Lua 5.1 still work',
    object: 'kafka',
    folder: 'kafka.strimzi.io/Kafka',
    script: `local conds = obj.status.conditions
local a, b = unpack({ "x", "y" })
return { status = "Healthy", message = table.getn(conds) .. a .. b .. math.pow(2, 3) .. " " .. table.maxn({ 1, 2, 3 }) }`,
    health: 'Healthy',
    message: '1xy8 3',
  },
  {
    name: 'string patterns: match captures, gsub, find and gfind',
    object: 'cluster',
    folder: 'postgresql.cnpg.io/Cluster',
    script: `local word = string.match(obj.status.phase, "in (%a+) state")
local primary, n = obj.status.currentPrimary:match("^(.-)%-(%d+)$")
local count = 0
for _ in string.gfind(obj.status.phase, "%a+") do count = count + 1 end
local dashed = (obj.status.phase:gsub("%s", "-"))
return { status = "Healthy", message = word .. "|" .. primary .. "|" .. n .. "|" .. count .. "|" .. dashed .. "|" .. tostring(string.find(dashed, "healthy", 1, true)) }`,
    health: 'Healthy',
    message: 'healthy|orders-db|1|4|Cluster-in-healthy-state|12',
  },
  {
    name: 'ordinary patterns on a long message still run (only runaway backtracking is refused)',
    object: 'cluster',
    folder: 'postgresql.cnpg.io/Cluster',
    script: `local long = string.rep("waiting for replicas; ", 500) .. obj.status.readyInstances .. "/" .. obj.spec.instances .. " ready"
local ready, total = long:match("(%d+)/(%d+) ready")
return { status = "Progressing", message = ready .. " of " .. total .. " (" .. #long .. " bytes)" }`,
    health: 'Progressing',
    message: '2 of 3 (11009 bytes)',
  },
  {
    name: 'ready instances below desired is Progressing with integer counts',
    object: 'cluster',
    folder: 'postgresql.cnpg.io/Cluster',
    script: `if obj.status.readyInstances < obj.spec.instances then
  return { status = "Progressing", message = "Ready instances " .. obj.status.readyInstances .. " of " .. obj.spec.instances }
end
return { status = "Healthy" }`,
    health: 'Progressing',
    message: 'Ready instances 2 of 3',
  },
  {
    name: 'os.time and os.date work through require("os"); other os functions do not exist',
    object: 'configMap',
    folder: 'ConfigMap',
    script: `local os = require("os")
local t = os.time({ year = 2026, month = 1, day = 2, hour = 12 })
return { status = "Healthy", message = type(t) .. " " .. os.date("!%Y", 0) .. " " .. tostring(os.execute) .. " " .. tostring(os.getenv) }`,
    health: 'Healthy',
    message: 'number 1970 nil nil',
  },
  {
    name: 'a status outside the six codes is Unknown "Lua returned an invalid health status"',
    object: 'configMap',
    folder: 'ConfigMap',
    script: `return { status = "Great", message = "all good" }`,
    health: 'Great',
    message: 'all good',
  },
];

describe('Argo CD Lua semantics on phaselog', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { checker, errors, dispose } = await createLuaChecker(c.folder, c.script);
    try {
      expect(errors).toEqual([]);
      const result = checker.evaluate(loadObject(c.object));
      expect(result?.customHealth).toMatchObject({ engine: 'lua', health: c.health, message: c.message });
    } finally {
      dispose();
    }
  });

  it('maps an invalid status to Unknown with Argo CD message', async () => {
    const { checker, dispose } = await createLuaChecker('ConfigMap', `return { status = "Great" }`);
    try {
      expect(checker.evaluate(loadObject('configMap'))).toMatchObject({
        status: 'Unknown',
        reason: 'HEALTH_CHECK_ERROR',
        message: 'Lua returned an invalid health status',
      });
    } finally {
      dispose();
    }
  });

  it.each([
    ['a number', 'return 5', 'expect table output from Lua script, not number'],
    ['nothing', 'local x = 1', 'expect table output from Lua script, not nil'],
    ['a table whose status is a number', 'return { status = 3 }', 'health status must be a string, not number'],
  ])('a script returning %s is Unknown with a clear message', async (_what, script, message) => {
    const { checker, dispose } = await createLuaChecker('ConfigMap', script);
    try {
      expect(checker.evaluate(loadObject('configMap'))).toMatchObject({
        status: 'Unknown',
        reason: 'HEALTH_CHECK_ERROR',
        message,
      });
    } finally {
      dispose();
    }
  });
});
