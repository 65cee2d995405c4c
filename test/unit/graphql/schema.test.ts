/** The SDL is the API's documentation: every public type, field, argument and enum value is described. */
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isScalarType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { maxPageSizeOf } from '../../../src/graphql/query-cost.ts';
import { createSchema } from '../../../src/graphql/schema.ts';

describe('schema.graphql', () => {
  it('describes every type, field, argument and enum value', () => {
    const schema = createSchema();
    const missing: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (
        type.name.startsWith('__') ||
        (isScalarType(type) && ['String', 'Int', 'Float', 'Boolean', 'ID'].includes(type.name))
      )
        continue;
      if (!type.description?.trim()) missing.push(type.name);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`);
          for (const arg of 'args' in field ? field.args : [])
            if (!arg.description?.trim()) missing.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
      if (isEnumType(type))
        for (const value of type.getValues())
          if (!value.description?.trim()) missing.push(`${type.name}.${value.name}`);
    }
    expect(missing).toEqual([]);
  });

  it('says for every `first` the largest page the query limits allow', () => {
    const schema = createSchema();
    const found: [string, string | undefined, number][] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        const first = field.args.find((a) => a.name === 'first');
        if (first)
          found.push([
            `${type.name}.${field.name}`,
            /1 to (\d+)/.exec(first.description ?? '')?.[1],
            maxPageSizeOf(`${type.name}.${field.name}`),
          ]);
      }
    }
    expect(found.length).toBeGreaterThan(5);
    for (const [coordinate, documented, allowed] of found)
      expect({ coordinate, max: Number(documented) }).toEqual({ coordinate, max: allowed });
  });
});
