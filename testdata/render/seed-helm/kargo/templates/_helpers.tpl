{{- define "acme.branch" -}}
{{- if .root.Values.stageBranches -}}env/{{ .stage.name }}{{- else -}}{{ .root.Values.branch }}{{- end -}}
{{- end -}}
