{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "rdma-webhook.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full object name: <release>-<chart> unless the release name already holds the chart name. */}}
{{- define "rdma-webhook.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "rdma-webhook.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rdma-webhook.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rdma-webhook.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "rdma-webhook.labels" -}}
helm.sh/chart: {{ include "rdma-webhook.chart" . }}
{{ include "rdma-webhook.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: admission-webhook
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "rdma-webhook.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "rdma-webhook.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "rdma-webhook.tlsSecretName" -}}
{{- default (printf "%s-tls" (include "rdma-webhook.fullname" .)) .Values.certificates.secretName -}}
{{- end -}}

{{- define "rdma-webhook.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* DNS names of the Service, in the order the certificate lists them. */}}
{{- define "rdma-webhook.dnsNames" -}}
{{- $svc := include "rdma-webhook.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $names := list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) -}}
{{- concat $names .Values.certificates.extraDNSNames | uniq | toJson -}}
{{- end -}}

{{/* Namespaces never sent to the webhook: the control plane's and the webhook's own. */}}
{{- define "rdma-webhook.excludedNamespaces" -}}
{{- $always := list "kube-system" "kube-public" "kube-node-lease" .Release.Namespace -}}
{{- concat $always .Values.webhook.excludedNamespaces | uniq | toJson -}}
{{- end -}}

{{- define "rdma-webhook.namespaceSelector" -}}
{{- $sel := .Values.webhook.namespaceSelector -}}
{{- with $sel.matchLabels }}
matchLabels:
  {{- toYaml . | nindent 2 }}
{{- end }}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
      {{- include "rdma-webhook.excludedNamespaces" . | fromJsonArray | toYaml | nindent 6 }}
  {{- with $sel.matchExpressions }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* Webhook rules: the built-in kinds then the CRD kinds. */}}
{{- define "rdma-webhook.rules" -}}
{{- range (concat .Values.webhook.rules .Values.webhook.crdRules) }}
- apiGroups: {{ toJson .apiGroups }}
  apiVersions: {{ toJson (default (list "*") .apiVersions) }}
  operations: {{ toJson (default (list "CREATE" "UPDATE") .operations) }}
  resources: {{ toJson .resources }}
  scope: {{ default "Namespaced" .scope | quote }}
{{- end }}
{{- end -}}

{{/* Fail early on values that would make the drain unsafe. */}}
{{- define "rdma-webhook.validate" -}}
{{- $delay := .Values.server.shutdownDelay | toString -}}
{{- $delaySeconds := 0 -}}
{{- if regexMatch "^[0-9]+(\\.[0-9]+)?ms$" $delay -}}
{{- $delaySeconds = divf (trimSuffix "ms" $delay | float64) 1000 | ceil | int -}}
{{- else if regexMatch "^[0-9]+(\\.[0-9]+)?s$" $delay -}}
{{- $delaySeconds = trimSuffix "s" $delay | float64 | ceil | int -}}
{{- else if regexMatch "^[0-9]+(\\.[0-9]+)?m$" $delay -}}
{{- $delaySeconds = mulf (trimSuffix "m" $delay | float64) 60 | ceil | int -}}
{{- else -}}
{{- fail (printf "server.shutdownDelay: %q is not a duration like 5s, 500ms or 1m" $delay) -}}
{{- end -}}
{{- $need := add $delaySeconds (int .Values.preStopSleepSeconds) (int .Values.webhook.timeoutSeconds) -}}
{{- if le (int .Values.terminationGracePeriodSeconds) $need -}}
{{- fail (printf "terminationGracePeriodSeconds: %d must exceed preStopSleepSeconds + server.shutdownDelay + webhook.timeoutSeconds = %d" (int .Values.terminationGracePeriodSeconds) $need) -}}
{{- end -}}
{{- if and (gt (int .Values.preStopSleepSeconds) 0) (semverCompare "<1.30.0-0" .Capabilities.KubeVersion.Version) -}}
{{- fail (printf "preStopSleepSeconds: the preStop sleep handler needs Kubernetes >= 1.30 (this cluster: %s); leave it 0, the server drains itself (server.shutdownDelay)" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- if and (not .Values.image.allowUnqualified) (not (include "rdma-webhook.repositoryHasRegistry" .)) -}}
{{- fail (printf "image.repository: %q names no registry host. Push the release image to your registry (skopeo copy oci-archive:... docker://<host>/<path>/rdma-webhook:<version>, docs/install.md) and set image.repository to <host>/<path>/rdma-webhook; for an image already loaded on every node set image.allowUnqualified=true and image.pullPolicy=Never" .Values.image.repository) -}}
{{- end -}}
{{- if and (eq .Values.certificates.mode "existingSecret") (not .Values.certificates.secretName) -}}
{{- fail "certificates.secretName: required when certificates.mode is existingSecret (a kubernetes.io/tls Secret with tls.crt and tls.key)" -}}
{{- end -}}
{{- if and (eq .Values.certificates.mode "existingSecret") (not .Values.certificates.existingSecret.caBundle) -}}
{{- fail "certificates.existingSecret.caBundle: required when certificates.mode is existingSecret (base64 -w0 ca.crt)" -}}
{{- end -}}
{{- end -}}

{{/* failurePolicy of one webhook: the deprecated shared value wins when set. */}}
{{- define "rdma-webhook.failurePolicy" -}}
{{- if .Values.webhook.failurePolicy -}}
{{- .Values.webhook.failurePolicy -}}
{{- else if eq .kind "Mutating" -}}
{{- .Values.webhook.mutating.failurePolicy -}}
{{- else -}}
{{- .Values.webhook.validating.failurePolicy -}}
{{- end -}}
{{- end -}}

{{/*
  The CEL regex (RE2, anchored) of every resource name that makes a
  template worth sending: the policy's gpuResources, resources.vf and
  resources.shared globs plus webhook.matchConditions.extraResources.
  Glob to regex: quote everything, then `*` -> `.*` and `?` -> `.`.
*/}}
{{- define "rdma-webhook.resourceRegex" -}}
{{- $p := .Values.policy | default dict -}}
{{- $res := $p.resources | default dict -}}
{{- $globs := concat ($p.gpuResources | default list) ($res.vf | default list) ($res.shared | default list) .Values.webhook.matchConditions.extraResources | uniq -}}
{{- $alts := list -}}
{{- range $globs -}}
{{- $alts = append $alts (regexQuoteMeta . | replace "\\*" ".*" | replace "\\?" ".") -}}
{{- end -}}
{{- printf "^(%s)$" (join "|" $alts) -}}
{{- end -}}

{{/*
  The matchCondition (CEL): false, so the object is not sent, only for a Pod
  or a built-in workload whose pod template requests none of the resources
  (limits or requests, containers or initContainers) and carries no DRA
  resourceClaims. Everything else is sent: custom kinds (their templates are
  where policy.kinds says), a template that is not where expected, other
  operations. `[x].all(v, ...)` binds v to x, as CEL has no let. Every
  optional field is guarded with has(): an evaluation error would apply the
  failurePolicy to the object.
*/}}
{{- define "rdma-webhook.matchExpression" -}}
{{- $r := include "rdma-webhook.resourceRegex" . -}}
!(request.operation in ['CREATE', 'UPDATE']) || !has(object.spec) ||
[
  request.resource.group == '' && request.resource.resource == 'pods' ? [object.spec] :
  ((request.resource.group == 'batch' && request.resource.resource == 'jobs') ||
   (request.resource.group == 'apps' && request.resource.resource in ['deployments', 'statefulsets', 'replicasets', 'daemonsets'])) &&
  has(object.spec.template) && has(object.spec.template.spec) ? [object.spec.template.spec] :
  request.resource.group == 'batch' && request.resource.resource == 'cronjobs' &&
  has(object.spec.jobTemplate) && has(object.spec.jobTemplate.spec) &&
  has(object.spec.jobTemplate.spec.template) && has(object.spec.jobTemplate.spec.template.spec) ?
  [object.spec.jobTemplate.spec.template.spec] : []
].all(specs, size(specs) == 0 || specs.exists(s,
  (has(s.resourceClaims) && size(s.resourceClaims) > 0) ||
  ((has(s.containers) ? s.containers : []) + (has(s.initContainers) ? s.initContainers : [])).exists(c,
    ((has(c.resources) && has(c.resources.limits) ? c.resources.limits.map(k, k) : []) +
     (has(c.resources) && has(c.resources.requests) ? c.resources.requests.map(k, k) : [])
    ).exists(k, k.matches(r'{{ $r }}')))))
{{- end -}}

{{/* true when the image repository's first component names a registry host. */}}
{{- define "rdma-webhook.repositoryHasRegistry" -}}
{{- $first := splitList "/" .Values.image.repository | first -}}
{{- if and (gt (len (splitList "/" .Values.image.repository)) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
true
{{- end -}}
{{- end -}}

{{/* RBAC subjects of auditRBAC, with the apiGroup each kind needs. */}}
{{- define "rdma-webhook.auditSubjects" -}}
{{- range .Values.auditRBAC.subjects }}
- kind: {{ .kind }}
  name: {{ .name | quote }}
  {{- if eq .kind "ServiceAccount" }}
  namespace: {{ required "auditRBAC.subjects: a ServiceAccount needs its namespace" .namespace | quote }}
  {{- else }}
  apiGroup: {{ default "rbac.authorization.k8s.io" .apiGroup }}
  {{- end }}
{{- end }}
{{- end -}}
