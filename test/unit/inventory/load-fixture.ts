import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Reads a JSON fixture from test/fixtures/inventories. */
export function loadInventoryFixture(name: string): Record<string, unknown> {
  const path = fileURLToPath(new URL(`../../fixtures/inventories/${name}`, import.meta.url));
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** The airshipctl bundle is a v1 List; the inventory is its labelled ConfigMap. */
export function loadAirshipctlInventory(): Record<string, unknown> {
  const list = loadInventoryFixture('airshipctl-phase-inventory.json');
  const items = list.items as Array<Record<string, unknown>>;
  const found = items.find((item) => item.kind === 'ConfigMap');
  if (found === undefined) throw new Error('airshipctl fixture has no ConfigMap');
  return found;
}
