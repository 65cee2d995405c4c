import { messageOf, reasonOf, statusOf, typeOf } from '../conditions.ts';
import type { ConditionList } from '../conditions.ts';
import { current, failed, inProgress } from '../result.ts';
import type { StatusResult } from '../types.ts';

/**
 * kstatus `crdConditions` (apiextensions.k8s.io CustomResourceDefinition), conditions in list order:
 * `NamesAccepted=False` is Failed with that condition's reason and message; `Established=False`
 * with a reason other than `Installing` is Failed likewise; `Established=True` is Current
 * `CRD is established`. Nothing decisive: InProgress `Installing`, `Install in progress`.
 */
export function computeCustomResourceDefinitionStatus(_obj: unknown, conditions: ConditionList): StatusResult {
  for (const c of conditions) {
    const type = typeOf(c);
    const status = statusOf(c);
    if (type === 'NamesAccepted' && status === 'False') return failed(reasonOf(c), messageOf(c));
    if (type === 'Established') {
      if (status === 'False' && reasonOf(c) !== 'Installing') return failed(reasonOf(c), messageOf(c));
      if (status === 'True') return current('CRD is established');
    }
  }
  return inProgress('Installing', 'Install in progress');
}
