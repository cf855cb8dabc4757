{{/* Names and labels. */}}
{{- define "likeness.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "likeness.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "likeness.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "likeness.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "likeness.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "likeness.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one role: (dict "root" $ "role" "api"). */}}
{{- define "likeness.selectorLabels" -}}
app.kubernetes.io/name: {{ include "likeness.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end }}

{{- define "likeness.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "likeness.secretName" -}}
{{- .Values.existingSecret | default (printf "%s-secrets" (include "likeness.fullname" .)) }}
{{- end }}

{{/* Where the workers and LiveKit's webhooks reach the API replicas (INTERNAL_URL). */}}
{{- define "likeness.internalUrl" -}}
http://{{ include "likeness.fullname" . }}-api:{{ .Values.api.port }}
{{- end }}

{{/*
The agent pod's grace: the drain, then the margin for the worker's own stop, so that Kubernetes
never kills a worker still draining (agent.drainSeconds feeds both; they cannot drift).
*/}}
{{- define "likeness.agentGraceSeconds" -}}
{{- add (int .Values.agent.drainSeconds) (max 1 (int .Values.agent.drainMarginSeconds)) }}
{{- end }}

{{/*
Keys from the Secret, one variable each under its own name: (dict "root" $ "required" (list …)
"optional" (list …)). A required key missing keeps the pod from starting, naming it; an
optional one missing is simply unset (the setting's default).
*/}}
{{- define "likeness.secretEnv" -}}
{{- $secret := include "likeness.secretName" .root }}
{{- range .required }}
- name: {{ . }}
  valueFrom:
    secretKeyRef: { name: {{ $secret }}, key: {{ . }} }
{{- end }}
{{- range .optional }}
- name: {{ . }}
  valueFrom:
    secretKeyRef: { name: {{ $secret }}, key: {{ . }}, optional: true }
{{- end }}
{{- end }}

{{/* Plain settings from a map (name: value), sorted. */}}
{{- define "likeness.plainEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* Both roles: keys of the cloud providers and hosted avatars (absent: offline models, no hosted pipeline). */}}
{{- define "likeness.providerKeys" -}}
{{- list "OPENAI_API_KEY" "DEEPGRAM_API_KEY" "ELEVENLABS_API_KEY" "LEMONSLICE_API_KEY" "ANAM_API_KEY" "BEY_API_KEY" | toJson }}
{{- end }}

{{/* The PromQL selector of the workers' series (the agent Service's scrape job). */}}
{{- define "likeness.agentSelector" -}}
{{- .Values.agent.autoscaling.keda.selector | default (printf "namespace=%q,job=%q" .Release.Namespace (printf "%s-agent" (include "likeness.fullname" .))) }}
{{- end }}

{{- define "likeness.podSecurity" -}}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Both roles: where LiveKit is, the worker name, the logs. */}}
{{- define "likeness.sharedEnv" -}}
{{- with .Values.livekit.url }}
- name: LIVEKIT_URL
  value: {{ . | quote }}
{{- end }}
- name: AGENT_NAME
  value: {{ .Values.livekit.agentName | quote }}
# One JSON object per line, for the log collector; the agents SDK's lines are JSON too.
- name: LOG_FORMAT
  value: json
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end }}
