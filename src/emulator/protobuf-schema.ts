/**
 * Field tables of the Kubernetes protobuf messages the emulator decodes: the built-in kinds that
 * kubectl's typed clients send as `application/vnd.kubernetes.protobuf` (every `kubectl create
 * <subcommand>`, `kubectl create token`). Numbers follow k8s.io/api's generated.proto; field names
 * there are the JSON names.
 *
 * Notation: `name:type`, where type is `string`, `int`, `bool`, `bytes`, `Time`, `Quantity`,
 * `IntOrString` or a message below; `[]` before the type repeats it, `map<type>` is a map from
 * string. A trailing `!` keeps the field even when it holds its zero value: Go's encoder writes
 * every non-pointer field, so zero values are dropped as JSON's `omitempty` would, except for
 * pointer fields (written only when set) and fields without `omitempty`.
 */

const META: Record<string, Record<number, string>> = {
  ObjectMeta: {
    1: 'name:string', 2: 'generateName:string', 3: 'namespace:string', 4: 'selfLink:string', 5: 'uid:string',
    6: 'resourceVersion:string', 7: 'generation:int', 8: 'creationTimestamp:Time', 9: 'deletionTimestamp:Time',
    10: 'deletionGracePeriodSeconds:int!', 11: 'labels:map<string>', 12: 'annotations:map<string>',
    13: 'ownerReferences:[]OwnerReference', 14: 'finalizers:[]string',
  },
  OwnerReference: { 1: 'kind:string', 3: 'name:string', 4: 'uid:string', 5: 'apiVersion:string', 6: 'controller:bool!', 7: 'blockOwnerDeletion:bool!' },
  LabelSelector: { 1: 'matchLabels:map<string>', 2: 'matchExpressions:[]LabelSelectorRequirement' },
  LabelSelectorRequirement: { 1: 'key:string', 2: 'operator:string', 3: 'values:[]string' },
  ObjectReference: { 1: 'kind:string', 2: 'namespace:string', 3: 'name:string', 4: 'uid:string', 5: 'apiVersion:string', 6: 'resourceVersion:string', 7: 'fieldPath:string' },
  LocalObjectReference: { 1: 'name:string' },
};

const CORE: Record<string, Record<number, string>> = {
  ConfigMap: { 1: 'metadata:ObjectMeta', 2: 'data:map<string>', 3: 'binaryData:map<bytes>', 4: 'immutable:bool!' },
  Secret: { 1: 'metadata:ObjectMeta', 2: 'data:map<bytes>', 3: 'type:string', 4: 'stringData:map<string>', 5: 'immutable:bool!' },
  Namespace: { 1: 'metadata:ObjectMeta', 2: 'spec:NamespaceSpec', 3: 'status:NamespaceStatus' },
  NamespaceSpec: { 1: 'finalizers:[]string' },
  NamespaceStatus: { 1: 'phase:string' },
  ServiceAccount: { 1: 'metadata:ObjectMeta', 2: 'secrets:[]ObjectReference', 3: 'imagePullSecrets:[]LocalObjectReference', 4: 'automountServiceAccountToken:bool!' },
  Service: { 1: 'metadata:ObjectMeta', 2: 'spec:ServiceSpec', 3: 'status:ServiceStatus' },
  ServiceSpec: {
    1: 'ports:[]ServicePort', 2: 'selector:map<string>', 3: 'clusterIP:string', 4: 'type:string', 5: 'externalIPs:[]string',
    7: 'sessionAffinity:string', 8: 'loadBalancerIP:string', 9: 'loadBalancerSourceRanges:[]string', 10: 'externalName:string',
    11: 'externalTrafficPolicy:string', 12: 'healthCheckNodePort:int', 13: 'publishNotReadyAddresses:bool',
    17: 'ipFamilyPolicy:string!', 18: 'clusterIPs:[]string', 19: 'ipFamilies:[]string', 20: 'allocateLoadBalancerNodePorts:bool!',
    21: 'loadBalancerClass:string!', 22: 'internalTrafficPolicy:string!',
  },
  ServicePort: { 1: 'name:string', 2: 'protocol:string', 3: 'port:int!', 4: 'targetPort:IntOrString', 5: 'nodePort:int', 6: 'appProtocol:string!' },
  ServiceStatus: {},
  ResourceQuota: { 1: 'metadata:ObjectMeta', 2: 'spec:ResourceQuotaSpec', 3: 'status:ResourceQuotaStatus' },
  ResourceQuotaSpec: { 1: 'hard:map<Quantity>', 2: 'scopes:[]string', 3: 'scopeSelector:ScopeSelector' },
  ScopeSelector: { 1: 'matchExpressions:[]ScopedResourceSelectorRequirement' },
  ScopedResourceSelectorRequirement: { 1: 'scopeName:string', 2: 'operator:string', 3: 'values:[]string' },
  ResourceQuotaStatus: { 1: 'hard:map<Quantity>', 2: 'used:map<Quantity>' },
  PodTemplateSpec: { 1: 'metadata:ObjectMeta', 2: 'spec:PodSpec' },
  PodSpec: {
    2: 'containers:[]Container', 3: 'restartPolicy:string', 4: 'terminationGracePeriodSeconds:int!', 5: 'activeDeadlineSeconds:int!',
    6: 'dnsPolicy:string', 7: 'nodeSelector:map<string>', 8: 'serviceAccountName:string', 9: 'serviceAccount:string',
    10: 'nodeName:string', 11: 'hostNetwork:bool', 12: 'hostPID:bool', 13: 'hostIPC:bool', 15: 'imagePullSecrets:[]LocalObjectReference',
    16: 'hostname:string', 17: 'subdomain:string', 19: 'schedulerName:string', 20: 'initContainers:[]Container',
    21: 'automountServiceAccountToken:bool!', 24: 'priorityClassName:string', 25: 'priority:int!', 29: 'runtimeClassName:string!',
    30: 'enableServiceLinks:bool!', 31: 'preemptionPolicy:string!', 35: 'setHostnameAsFQDN:bool!', 37: 'hostUsers:bool!',
  },
  Container: {
    1: 'name:string', 2: 'image:string', 3: 'command:[]string', 4: 'args:[]string', 5: 'workingDir:string',
    6: 'ports:[]ContainerPort', 7: 'env:[]EnvVar', 8: 'resources:ResourceRequirements', 13: 'terminationMessagePath:string',
    14: 'imagePullPolicy:string', 16: 'stdin:bool', 17: 'stdinOnce:bool', 18: 'tty:bool', 20: 'terminationMessagePolicy:string',
    24: 'restartPolicy:string!',
  },
  ContainerPort: { 1: 'name:string', 2: 'hostPort:int', 3: 'containerPort:int!', 4: 'protocol:string', 5: 'hostIP:string' },
  EnvVar: { 1: 'name:string', 2: 'value:string' },
  ResourceRequirements: { 1: 'limits:map<Quantity>', 2: 'requests:map<Quantity>' },
};

const APPS_BATCH: Record<string, Record<number, string>> = {
  Deployment: { 1: 'metadata:ObjectMeta', 2: 'spec:DeploymentSpec', 3: 'status:DeploymentStatus' },
  DeploymentSpec: {
    1: 'replicas:int!', 2: 'selector:LabelSelector', 3: 'template:PodTemplateSpec', 4: 'strategy:DeploymentStrategy',
    5: 'minReadySeconds:int', 6: 'revisionHistoryLimit:int!', 7: 'paused:bool', 9: 'progressDeadlineSeconds:int!',
  },
  DeploymentStrategy: { 1: 'type:string', 2: 'rollingUpdate:RollingUpdateDeployment' },
  RollingUpdateDeployment: { 1: 'maxUnavailable:IntOrString', 2: 'maxSurge:IntOrString' },
  DeploymentStatus: { 1: 'observedGeneration:int', 2: 'replicas:int', 3: 'updatedReplicas:int', 4: 'availableReplicas:int', 5: 'unavailableReplicas:int', 7: 'readyReplicas:int' },
  Job: { 1: 'metadata:ObjectMeta', 2: 'spec:JobSpec', 3: 'status:JobStatus' },
  JobSpec: {
    1: 'parallelism:int!', 2: 'completions:int!', 3: 'activeDeadlineSeconds:int!', 4: 'selector:LabelSelector', 5: 'manualSelector:bool!',
    6: 'template:PodTemplateSpec', 7: 'backoffLimit:int!', 8: 'ttlSecondsAfterFinished:int!', 9: 'completionMode:string!', 10: 'suspend:bool!',
  },
  JobStatus: { 4: 'active:int', 5: 'succeeded:int', 6: 'failed:int', 7: 'completedIndexes:string', 9: 'ready:int!', 11: 'terminating:int!' },
  JobTemplateSpec: { 1: 'metadata:ObjectMeta', 2: 'spec:JobSpec' },
  CronJob: { 1: 'metadata:ObjectMeta', 2: 'spec:CronJobSpec', 3: 'status:CronJobStatus' },
  CronJobSpec: {
    1: 'schedule:string', 2: 'startingDeadlineSeconds:int!', 3: 'concurrencyPolicy:string', 4: 'suspend:bool!', 5: 'jobTemplate:JobTemplateSpec',
    6: 'successfulJobsHistoryLimit:int!', 7: 'failedJobsHistoryLimit:int!', 8: 'timeZone:string!',
  },
  CronJobStatus: {},
  PodDisruptionBudget: { 1: 'metadata:ObjectMeta', 2: 'spec:PodDisruptionBudgetSpec', 3: 'status:PodDisruptionBudgetStatus' },
  PodDisruptionBudgetSpec: { 1: 'minAvailable:IntOrString', 2: 'selector:LabelSelector', 3: 'maxUnavailable:IntOrString', 4: 'unhealthyPodEvictionPolicy:string!' },
  PodDisruptionBudgetStatus: { 1: 'observedGeneration:int', 3: 'disruptionsAllowed:int', 4: 'currentHealthy:int', 5: 'desiredHealthy:int', 6: 'expectedPods:int' },
  PriorityClass: { 1: 'metadata:ObjectMeta', 2: 'value:int!', 3: 'globalDefault:bool', 4: 'description:string', 5: 'preemptionPolicy:string!' },
};

const RBAC_NET_AUTH: Record<string, Record<number, string>> = {
  Role: { 1: 'metadata:ObjectMeta', 2: 'rules:[]PolicyRule' },
  ClusterRole: { 1: 'metadata:ObjectMeta', 2: 'rules:[]PolicyRule', 3: 'aggregationRule:AggregationRule' },
  PolicyRule: { 1: 'verbs:[]string', 2: 'apiGroups:[]string', 3: 'resources:[]string', 4: 'resourceNames:[]string', 5: 'nonResourceURLs:[]string' },
  AggregationRule: { 1: 'clusterRoleSelectors:[]LabelSelector' },
  RoleBinding: { 1: 'metadata:ObjectMeta', 2: 'subjects:[]Subject', 3: 'roleRef:RoleRef' },
  ClusterRoleBinding: { 1: 'metadata:ObjectMeta', 2: 'subjects:[]Subject', 3: 'roleRef:RoleRef' },
  Subject: { 1: 'kind:string', 2: 'apiGroup:string', 3: 'name:string', 4: 'namespace:string' },
  RoleRef: { 1: 'apiGroup:string', 2: 'kind:string', 3: 'name:string' },
  Ingress: { 1: 'metadata:ObjectMeta', 2: 'spec:IngressSpec', 3: 'status:IngressStatus' },
  IngressSpec: { 1: 'defaultBackend:IngressBackend', 2: 'tls:[]IngressTLS', 3: 'rules:[]IngressRule', 4: 'ingressClassName:string!' },
  IngressTLS: { 1: 'hosts:[]string', 2: 'secretName:string' },
  // `ingressRuleValue` is embedded inline in Go, so its `http` field sits on the rule in JSON.
  IngressRule: { 1: 'host:string', 2: '...:IngressRuleValue' },
  IngressRuleValue: { 1: 'http:HTTPIngressRuleValue' },
  HTTPIngressRuleValue: { 1: 'paths:[]HTTPIngressPath' },
  HTTPIngressPath: { 1: 'path:string', 2: 'backend:IngressBackend', 3: 'pathType:string!' },
  IngressBackend: { 3: 'resource:TypedLocalObjectReference', 4: 'service:IngressServiceBackend' },
  TypedLocalObjectReference: { 1: 'apiGroup:string!', 2: 'kind:string', 3: 'name:string' },
  IngressServiceBackend: { 1: 'name:string', 2: 'port:ServiceBackendPort' },
  ServiceBackendPort: { 1: 'name:string', 2: 'number:int' },
  IngressStatus: {},
  SelfSubjectAccessReview: { 1: 'metadata:ObjectMeta', 2: 'spec:SelfSubjectAccessReviewSpec', 3: 'status:SubjectAccessReviewStatus' },
  SelfSubjectAccessReviewSpec: { 1: 'resourceAttributes:ResourceAttributes', 2: 'nonResourceAttributes:NonResourceAttributes' },
  ResourceAttributes: { 1: 'namespace:string', 2: 'verb:string', 3: 'group:string', 4: 'version:string', 5: 'resource:string', 6: 'subresource:string', 7: 'name:string' },
  NonResourceAttributes: { 1: 'path:string', 2: 'verb:string' },
  SubjectAccessReviewStatus: { 1: 'allowed:bool', 2: 'reason:string', 3: 'evaluationError:string', 4: 'denied:bool' },
  SelfSubjectReview: { 1: 'metadata:ObjectMeta', 2: 'status:SelfSubjectReviewStatus' },
  SelfSubjectReviewStatus: { 1: 'userInfo:UserInfo' },
  UserInfo: { 1: 'username:string', 2: 'uid:string', 3: 'groups:[]string' },
  TokenRequest: { 1: 'metadata:ObjectMeta', 2: 'spec:TokenRequestSpec', 3: 'status:TokenRequestStatus' },
  TokenRequestSpec: { 1: 'audiences:[]string', 3: 'boundObjectRef:BoundObjectReference', 4: 'expirationSeconds:int!' },
  BoundObjectReference: { 1: 'kind:string', 2: 'apiVersion:string', 3: 'name:string', 4: 'uid:string' },
  TokenRequestStatus: { 1: 'token:string', 2: 'expirationTimestamp:Time' },
};

/** Message name -> field number -> field notation. */
export const PROTOBUF_MESSAGES: Readonly<Record<string, Record<number, string>>> = { ...META, ...CORE, ...APPS_BATCH, ...RBAC_NET_AUTH };

/** Top-level message for each `apiVersion/kind` the emulator decodes. */
export const PROTOBUF_ROOTS: Readonly<Record<string, string>> = {
  'v1/ConfigMap': 'ConfigMap',
  'v1/Secret': 'Secret',
  'v1/Namespace': 'Namespace',
  'v1/ServiceAccount': 'ServiceAccount',
  'v1/Service': 'Service',
  'v1/ResourceQuota': 'ResourceQuota',
  'apps/v1/Deployment': 'Deployment',
  'batch/v1/Job': 'Job',
  'batch/v1/CronJob': 'CronJob',
  'policy/v1/PodDisruptionBudget': 'PodDisruptionBudget',
  'scheduling.k8s.io/v1/PriorityClass': 'PriorityClass',
  'rbac.authorization.k8s.io/v1/Role': 'Role',
  'rbac.authorization.k8s.io/v1/ClusterRole': 'ClusterRole',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'RoleBinding',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'ClusterRoleBinding',
  'networking.k8s.io/v1/Ingress': 'Ingress',
  'authentication.k8s.io/v1/TokenRequest': 'TokenRequest',
  'authentication.k8s.io/v1/SelfSubjectReview': 'SelfSubjectReview',
  'authorization.k8s.io/v1/SelfSubjectAccessReview': 'SelfSubjectAccessReview',
};
