{{/* The release's full name: the release name, with the chart's when it lacks it. */}}
{{- define "flipflop.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "flipflop.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "flipflop.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "flipflop.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "flipflop.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The image: repository:tag (v<appVersion> by default), @digest when given. */}}
{{- define "flipflop.image" -}}
{{- $tag := default (printf "v%s" .Chart.AppVersion) .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The auditor's arguments: flipflop check --cluster --write-reports with the values' settings. */}}
{{- define "flipflop.auditorArgs" -}}
{{- $a := .Values.auditor -}}
- check
- --cluster
- --write-reports
{{- if not $a.annotationWaivers }}
- --no-waivers
{{- end }}
- --output=json
- --progress=never
- --fail-on={{ $a.failOn }}
{{- range $a.reportAPIs }}
- --report-api={{ . }}
{{- end }}
{{- with $a.kargoVersion }}
- --kargo-version={{ . }}
{{- end }}
{{- range $a.argocdNamespaces }}
- --argocd-namespace={{ . }}
{{- end }}
{{- with $a.defaultBranch }}
- --default-branch={{ . }}
{{- end }}
{{- range $a.rules }}
- --rule={{ . }}
{{- end }}
{{- range $a.skipRules }}
- --skip-rule={{ . }}
{{- end }}
{{- range $rule, $level := $a.severity }}
- --severity={{ $rule }}={{ $level }}
{{- end }}
{{- range $a.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* diagnose's arguments: diagnose --cluster with the settings it shares with the auditor. */}}
{{- define "flipflop.diagnoseArgs" -}}
{{- $a := .Values.auditor -}}
- diagnose
- --cluster
- --output=json
- --progress=never
{{- with $a.kargoVersion }}
- --kargo-version={{ . }}
{{- end }}
{{- range $a.argocdNamespaces }}
- --argocd-namespace={{ . }}
{{- end }}
{{- end -}}
