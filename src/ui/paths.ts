/**
 * Paths of the web UI's pages, shared by the UI's router (web/router.tsx) and by what links into the
 * UI from outside it (notification messages), so a link cannot point where the router does not go.
 */

/** The page of a phase. */
export function phasePath(phase: { cluster: string; namespace: string; name: string }): string {
  return `/phases/${[phase.cluster, phase.namespace, phase.name].map(encodeURIComponent).join('/')}`;
}
