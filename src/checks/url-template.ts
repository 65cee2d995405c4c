/**
 * URL templates of checks: `https://{{ labels.app }}.{{ cluster }}.example/healthz`. Hand-written
 * on purpose: only plain substitution of a fixed set of variables, each value URL-encoded. A
 * template engine (conditionals, loops, helpers, partials) would give whoever writes labels on a
 * cluster object a language to run inside phaselog's workers: attack surface for no use here.
 */
import type { CheckedPhase } from './config.ts';

/** A variable a template may use. */
export const TEMPLATE_VARIABLE = /^(cluster|namespace|name|source|labels\.[A-Za-z0-9._/-]+)$/;

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The variables a template names, in order; undefined when its braces are unbalanced. */
export function templateVariables(template: string): string[] | undefined {
  const names = [...template.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
  const rest = template.replace(PLACEHOLDER, '');
  if (rest.includes('{{') || rest.includes('}}')) return undefined;
  return names;
}

/** Filling a template failed: a label the phase does not carry, or an unknown variable. */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

/** The URL for `phase`: each placeholder replaced by its value, URL-encoded. */
export function fillUrlTemplate(template: string, phase: CheckedPhase): string {
  return template.replace(PLACEHOLDER, (_all, name: string) => {
    const value = valueOf(name, phase);
    if (value === undefined)
      throw new TemplateError(
        name.startsWith('labels.')
          ? `the phase has no label ${name.slice('labels.'.length)}`
          : `unknown template variable ${name}`,
      );
    // encodeURIComponent leaves dots alone: a value of `.` or `..` would be a dot segment the URL
    // parser resolves (climbing a path level), so its dots are encoded too.
    return value === '.' || value === '..' ? value.replaceAll('.', '%2E') : encodeURIComponent(value);
  });
}

function valueOf(name: string, phase: CheckedPhase): string | undefined {
  switch (name) {
    case 'cluster':
      return phase.cluster;
    case 'namespace':
      return phase.namespace;
    case 'name':
      return phase.name;
    case 'source':
      return phase.source;
    default:
      if (!name.startsWith('labels.')) return undefined;
      // Own properties only: a label named __proto__ or constructor must not reach Object's.
      return Object.hasOwn(phase.labels, name.slice('labels.'.length))
        ? phase.labels[name.slice('labels.'.length)]
        : undefined;
  }
}
