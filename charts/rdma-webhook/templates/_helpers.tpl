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
{{- if and (eq .Values.certificates.mode "existingSecret") (not .Values.certificates.secretName) -}}
{{- fail "certificates.secretName: required when certificates.mode is existingSecret (a kubernetes.io/tls Secret with tls.crt and tls.key)" -}}
{{- end -}}
{{- if and (eq .Values.certificates.mode "existingSecret") (not .Values.certificates.existingSecret.caBundle) -}}
{{- fail "certificates.existingSecret.caBundle: required when certificates.mode is existingSecret (base64 -w0 ca.crt)" -}}
{{- end -}}
{{- end -}}
