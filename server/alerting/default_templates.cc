// Vigil's default notification templates (written for Vigil, in the spirit
// of Alertmanager's default.tmpl): a title and a message per receiver kind,
// an e-mail subject and HTML body, and Alertmanager's common template names
// as aliases so configurations written for Alertmanager keep working.
#include "server/alerting/template_data.h"

namespace vigil::alerting {

namespace {

constexpr std::string_view kDefaults = R"tmpl(
{{/* ---- building blocks ---- */}}

{{ define "vigil.default.name" -}}
{{ with .GroupLabels.alertname }}{{ . }}{{ else }}{{ with .CommonLabels.alertname }}{{ . }}{{ else }}{{ len .Alerts }} alerts{{ end }}{{ end }}
{{- end }}

{{/* The labels of note in a title: the group's labels (but alertname) and
     a common severity, as " (name=value, ...)". */}}
{{ define "vigil.default.group_labels" -}}
{{ $group := .GroupLabels }}{{ $first := true }}
{{- range .CommonLabels.SortedPairs }}
{{- if and (ne .Name "alertname") (or (ne (index $group .Name) "") (eq .Name "severity")) }}
{{- if $first }} ({{ else }}, {{ end }}{{ $first = false }}{{ .Name }}={{ .Value }}
{{- end }}
{{- end }}
{{- if not $first }}){{ end }}
{{- end }}

{{ define "vigil.default.counts" -}}
{{ .Status | toUpper }}{{ if eq .Status "firing" }}:{{ len .Alerts.Firing }}{{ with .Alerts.Resolved }}, RESOLVED:{{ len . }}{{ end }}{{ end }}
{{- end }}

{{ define "vigil.default.title" -}}
[{{ template "vigil.default.counts" . }}] {{ template "vigil.default.name" . }}
{{- template "vigil.default.group_labels" . }}
{{- end }}

{{/* One alert as a few lines of text; "." is a template.Alert. */}}
{{ define "vigil.default.alert" -}}
- {{ with .Annotations.summary }}{{ . }}{{ else }}{{ .Labels.alertname }}{{ end }}
{{ with .Annotations.description }}  {{ . }}
{{ end }}
{{- with .Labels.Remove (stringSlice "alertname") }}  Labels: {{ range $i, $p := .SortedPairs }}{{ if $i }}, {{ end }}{{ $p.Name }}={{ $p.Value }}{{ end }}
{{ end }}
{{- if eq .Status "resolved" }}  Started: {{ .StartsAt.Format "2006-01-02 15:04:05 MST" }}, resolved: {{ .EndsAt.Format "2006-01-02 15:04:05 MST" }}
{{ else }}  Started: {{ .StartsAt.Format "2006-01-02 15:04:05 MST" }}
{{ end }}
{{- with .Annotations.runbook_url }}  Runbook: {{ . }}
{{ else }}{{ with .Annotations.runbook }}  Runbook: {{ . }}
{{ end }}{{ end }}
{{- with .GeneratorURL }}  Source: {{ . }}
{{ end }}
{{- end }}

{{/* A list of alerts ("." is a list of template.Alert). */}}
{{ define "vigil.default.alert_list" }}{{ range . }}{{ template "vigil.default.alert" . }}{{ end }}{{ end }}

{{/* ---- messages ---- */}}

{{ define "vigil.default.text" -}}
{{ with .Alerts.Firing }}Firing ({{ len . }}):
{{ template "vigil.default.alert_list" . }}{{ end }}
{{- with .Alerts.Resolved }}{{ if $.Alerts.Firing }}
{{ end }}Resolved ({{ len . }}):
{{ template "vigil.default.alert_list" . }}{{ end }}
{{- end }}

{{ define "vigil.default.message" -}}
{{ with .Alerts.Firing }}**Firing ({{ len . }})**
{{ template "vigil.default.alert_list" . }}{{ end }}
{{- with .Alerts.Resolved }}{{ if $.Alerts.Firing }}
{{ end }}**Resolved ({{ len . }})**
{{ template "vigil.default.alert_list" . }}{{ end }}
{{- end }}

{{ define "vigil.default.slack.message" -}}
{{ with .Alerts.Firing }}*Firing ({{ len . }})*
{{ template "vigil.default.alert_list" . }}{{ end }}
{{- with .Alerts.Resolved }}{{ if $.Alerts.Firing }}
{{ end }}*Resolved ({{ len . }})*
{{ template "vigil.default.alert_list" . }}{{ end }}
{{- end }}

{{ define "vigil.default.subject" }}{{ template "vigil.default.title" . }}{{ end }}

{{ define "vigil.default.html_alert" -}}
<tr><td style="padding:8px 12px;border-top:1px solid #ddd">
<b>{{ with .Annotations.summary }}{{ . }}{{ else }}{{ .Labels.alertname }}{{ end }}</b><br>
{{ with .Annotations.description }}{{ . }}<br>
{{ end }}
{{- with .Labels.Remove (stringSlice "alertname") }}<small>{{ range $i, $p := .SortedPairs }}{{ if $i }}, {{ end }}{{ $p.Name }}={{ $p.Value }}{{ end }}</small><br>
{{ end }}
{{- if eq .Status "resolved" }}<small>Started {{ .StartsAt.Format "2006-01-02 15:04:05 MST" }}, resolved {{ .EndsAt.Format "2006-01-02 15:04:05 MST" }}</small><br>
{{ else }}<small>Started {{ .StartsAt.Format "2006-01-02 15:04:05 MST" }}</small><br>
{{ end }}
{{- with .Annotations.runbook_url }}<a href="{{ . }}">Runbook</a> {{ else }}{{ with .Annotations.runbook }}<a href="{{ . }}">Runbook</a> {{ end }}{{ end }}
{{- with .GeneratorURL }}<a href="{{ . }}">Source</a>{{ end }}
</td></tr>
{{ end }}

{{ define "vigil.default.html" -}}
<!DOCTYPE html>
<html><head><meta charset="UTF-8"><title>{{ template "vigil.default.subject" . }}</title></head>
<body style="font-family:sans-serif;font-size:14px">
<h2 style="font-size:16px">{{ template "vigil.default.subject" . }}</h2>
<table style="border-collapse:collapse;width:100%">
{{ with .Alerts.Firing }}<tr><td style="padding:8px 12px;background:#e45959;color:#fff"><b>Firing ({{ len . }})</b></td></tr>
{{ range . }}{{ template "vigil.default.html_alert" . }}{{ end }}{{ end }}
{{- with .Alerts.Resolved }}<tr><td style="padding:8px 12px;background:#68b90f;color:#fff"><b>Resolved ({{ len . }})</b></td></tr>
{{ range . }}{{ template "vigil.default.html_alert" . }}{{ end }}{{ end -}}
</table>
{{ with .ExternalURL }}<p><small>Sent by <a href="{{ . }}">{{ . }}</a></small></p>
{{ end -}}
</body></html>
{{ end }}

{{/* ---- per receiver kind ---- */}}

{{ define "vigil.default.email.subject" }}{{ template "vigil.default.subject" . }}{{ end }}
{{ define "vigil.default.email.html" }}{{ template "vigil.default.html" . }}{{ end }}
{{ define "vigil.default.email.text" }}{{ template "vigil.default.text" . }}{{ end }}
{{ define "vigil.default.slack.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "vigil.default.discord.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "vigil.default.discord.message" }}{{ template "vigil.default.message" . }}{{ end }}
{{ define "vigil.default.telegram.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "vigil.default.telegram.message" }}{{ template "vigil.default.title" . }}
{{ template "vigil.default.text" . }}{{ end }}
{{ define "vigil.default.msteams.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "vigil.default.msteams.message" }}{{ template "vigil.default.message" . }}{{ end }}
{{ define "vigil.default.wecom.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "vigil.default.wecom.message" }}{{ template "vigil.default.message" . }}{{ end }}
{{ define "vigil.default.dingtalk.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "vigil.default.dingtalk.message" }}{{ template "vigil.default.message" . }}{{ end }}
{{ define "vigil.default.feishu.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "vigil.default.feishu.message" }}{{ template "vigil.default.text" . }}{{ end }}

{{/* ---- Alertmanager's names, as aliases ---- */}}

{{ define "__alertmanager" }}Vigil{{ end }}
{{ define "__subject" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "__description" }}{{ end }}
{{ define "__text_alert_list" }}{{ template "vigil.default.alert_list" . }}{{ end }}
{{ define "__alertmanagerURL" }}{{ .ExternalURL }}{{ end }}
{{ define "email.default.subject" }}{{ template "vigil.default.subject" . }}{{ end }}
{{ define "email.default.html" }}{{ template "vigil.default.html" . }}{{ end }}
{{ define "slack.default.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "slack.default.text" }}{{ template "vigil.default.slack.message" . }}{{ end }}
{{ define "slack.default.username" }}{{ template "__alertmanager" . }}{{ end }}
{{ define "slack.default.titlelink" }}{{ template "__alertmanagerURL" . }}{{ end }}
{{ define "slack.default.fallback" }}{{ template "slack.default.title" . }}{{ end }}
{{ define "slack.default.callbackid" }}{{ end }}
{{ define "slack.default.pretext" }}{{ end }}
{{ define "slack.default.iconemoji" }}{{ end }}
{{ define "slack.default.iconurl" }}{{ end }}
{{ define "slack.default.footer" }}{{ end }}
{{ define "discord.default.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "discord.default.message" }}{{ template "vigil.default.message" . }}{{ end }}
{{ define "telegram.default.message" }}{{ template "vigil.default.telegram.message" . }}{{ end }}
{{ define "msteams.default.title" }}{{ template "vigil.default.title" . }}{{ end }}
{{ define "msteams.default.text" }}{{ template "vigil.default.message" . }}{{ end }}
{{ define "msteams.default.summary" }}{{ template "vigil.default.title" . }}{{ end }}
)tmpl";

}  // namespace

std::string_view DefaultTemplates() { return kDefaults; }

}  // namespace vigil::alerting
