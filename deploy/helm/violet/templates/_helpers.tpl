{{/*
Shared named templates. Per-component templates take a dict:
  root: the chart's top context ($), name: the component's key, c: its merged values.
*/}}

{{- define "violet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "violet.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The name of a part of the release, e.g. violet-session. */}}
{{- define "violet.partName" -}}
{{- printf "%s-%s" (include "violet.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "violet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "violet.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{- define "violet.labels" -}}
{{ include "violet.selectorLabels" . }}
app.kubernetes.io/part-of: violet
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{/* Labels every pod of the release carries, whatever its part. */}}
{{- define "violet.releasePeer" -}}
- podSelector:
    matchLabels:
      app.kubernetes.io/name: {{ include "violet.name" . }}
      app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Pods of the release whose component is one of .names. */}}
{{- define "violet.componentsPeer" -}}
- podSelector:
    matchLabels:
      app.kubernetes.io/name: {{ include "violet.name" .root }}
      app.kubernetes.io/instance: {{ .root.Release.Name }}
    matchExpressions:
      - key: app.kubernetes.io/component
        operator: In
        values: {{ .names | toJson }}
{{- end }}

{{/* The enabled components, each merged over componentDefaults, as YAML (read with fromYaml). */}}
{{- define "violet.components" -}}
{{- $components := dict }}
{{- range $name, $component := .Values.components }}
{{- $merged := mergeOverwrite (deepCopy $.Values.componentDefaults) (deepCopy $component) }}
{{- if $merged.enabled }}
{{- $_ := set $components $name $merged }}
{{- end }}
{{- end }}
{{- toYaml $components }}
{{- end }}

{{/* The enabled cron jobs, as YAML. */}}
{{- define "violet.cronJobs" -}}
{{- $components := fromYaml (include "violet.components" .) }}
{{- $jobs := dict }}
{{- range $name, $job := .Values.cronJobs }}
{{- if $job.enabled }}
{{- if not (hasKey $components $job.component) }}
{{- fail (printf "cronJobs.%s.component names %q, which is not an enabled component." $name $job.component) }}
{{- end }}
{{- $_ := set $jobs $name $job }}
{{- end }}
{{- end }}
{{- toYaml $jobs }}
{{- end }}

{{/* Who calls component .name: components and cron jobs that list it in `calls`, as JSON. */}}
{{- define "violet.callers" -}}
{{- $callers := list }}
{{- range $name, $c := fromYaml (include "violet.components" .root) }}
{{- if has $.name $c.calls }}
{{- $callers = append $callers $name }}
{{- end }}
{{- end }}
{{- range $name, $job := fromYaml (include "violet.cronJobs" .root) }}
{{- if has $.name $job.calls }}
{{- $callers = append $callers $name }}
{{- end }}
{{- end }}
{{- toJson $callers }}
{{- end }}

{{/* Parts of the release that use .need (database or qdrant), as JSON: components, cron jobs
of such components, and the migration job for the database. */}}
{{- define "violet.clientsOf" -}}
{{- $components := fromYaml (include "violet.components" .root) }}
{{- $clients := list }}
{{- range $name, $c := $components }}
{{- if has $.need $c.needs }}
{{- $clients = append $clients $name }}
{{- end }}
{{- end }}
{{- range $name, $job := fromYaml (include "violet.cronJobs" .root) }}
{{- $c := get $components $job.component }}
{{- if and $c (has $.need $c.needs) }}
{{- $clients = append $clients $name }}
{{- end }}
{{- end }}
{{- if and (eq .need "database") .root.Values.migrations.enabled }}
{{- $clients = append $clients "migrate" }}
{{- end }}
{{- toJson $clients }}
{{- end }}

{{- define "violet.image" -}}
{{- $image := .root.Values.image }}
{{- $repository := printf "%s%s" $image.prefix .name }}
{{- if $image.registry }}
{{- $repository = printf "%s/%s" (trimSuffix "/" $image.registry) $repository }}
{{- end }}
{{- printf "%s:%s" $repository (default .root.Chart.AppVersion $image.tag) }}
{{- end }}

{{- define "violet.secretName" -}}
{{- default (include "violet.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* The Secret the migration hook reads: its own copy, as the release's Secret may not exist yet
or may still hold the previous values while pre-upgrade hooks run. */}}
{{- define "violet.hookSecretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else }}
{{- include "violet.partName" (dict "root" . "name" "migrate") }}
{{- end }}
{{- end }}

{{/* Stops the render with a plain message when the values cannot make a working Violet. */}}
{{- define "violet.validate" -}}
{{- if and (not .Values.postgresql.enabled) (not .Values.existingSecret) (not .Values.externalDatabase.url) }}
{{- fail "Violet needs a database: set externalDatabase.url, or existingSecret with VIOLET_DATABASE_URL, or postgresql.enabled=true." }}
{{- end }}
{{- if and (not .Values.qdrant.enabled) (not .Values.externalQdrant.url) }}
{{- fail "Violet needs Qdrant: set externalQdrant.url, or qdrant.enabled=true." }}
{{- end }}
{{- if and .Values.oidc.issuer (not .Values.oidc.audience) }}
{{- fail "oidc.issuer needs oidc.audience: the client id its tokens are issued for." }}
{{- end }}
{{- range $name, $c := fromYaml (include "violet.components" .) }}
{{- include "violet.validateBudget" (dict "name" $name "c" $c) }}
{{- if eq (toString (get $c.env "VIOLET_SANDBOX_BACKEND")) "bubblewrap" }}
{{- fail (printf "components.%s: the bubblewrap sandbox needs user namespaces, a fresh /proc and a seccomp profile that allows them, which this chart's locked-down pods refuse; use VIOLET_SANDBOX_BACKEND=wasm (see docs/deploy.md)." $name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* A disruption budget must agree with the replica count and the placement: at least one pod
keeps serving while another is evicted, and a drain can always go on. */}}
{{- define "violet.validateBudget" -}}
{{- $c := .c }}
{{- if $c.podDisruptionBudget.enabled }}
{{- $setting := ternary "autoscaling.minReplicas" "replicas" $c.autoscaling.enabled }}
{{- $least := int (ternary $c.autoscaling.minReplicas $c.replicas $c.autoscaling.enabled) }}
{{- if lt $least 2 }}
{{- fail (printf "components.%s: %s is %d, but with a disruption budget it needs at least 2, so that a drain never takes its last pod; raise it, or set podDisruptionBudget.enabled=false." .name $setting $least) }}
{{- end }}
{{- $down := $c.podDisruptionBudget.maxUnavailable }}
{{- if and (not (kindIs "string" $down)) (ge (int $down) $least) }}
{{- fail (printf "components.%s: podDisruptionBudget.maxUnavailable %d lets all %d pods go at once; keep it below %s." .name (int $down) $least $setting) }}
{{- end }}
{{- if and $c.workspaces (has "ReadWriteOnce" $c.workspaces.accessModes) }}
{{- fail (printf "components.%s: a ReadWriteOnce workspace keeps its replicas on one node, whose drain a disruption budget would stall (an evicted pod could only come back on that node); use ReadWriteMany, or set podDisruptionBudget.enabled=false." .name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* Fills in secrets left empty in the values, once per render: the value the release's Secret
already holds (so upgrades keep them), else a new random one. */}}
{{- define "violet.resolveSecrets" -}}
{{- $existing := dict }}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "violet.fullname" .) }}
{{- if $secret }}
{{- $existing = $secret.data | default dict }}
{{- end }}
{{- if not .Values.secrets.tokenSecret }}
{{- $_ := set .Values.secrets "tokenSecret" (get $existing "VIOLET_SECRET" | b64dec | default (randAlphaNum 48)) }}
{{- end }}
{{- if not .Values.secrets.operatorSecret }}
{{- $_ := set .Values.secrets "operatorSecret" (get $existing "VIOLET_OPERATOR_SECRET" | b64dec | default (randAlphaNum 48)) }}
{{- end }}
{{- if and .Values.postgresql.enabled (not .Values.postgresql.password) }}
{{- $_ := set .Values.postgresql "password" (get $existing "POSTGRES_PASSWORD" | b64dec | default (randAlphaNum 32)) }}
{{- end }}
{{- if not .Values.secrets.databaseServicePassword }}
{{- $_ := set .Values.secrets "databaseServicePassword" (get $existing "VIOLET_DATABASE_SERVICE_PASSWORD" | b64dec | default (randAlphaNum 32)) }}
{{- end }}
{{- if not .Values.secrets.keyEncryptionKeys }}
{{- $made := printf "k%s:%s" (randAlphaNum 8 | lower) (randBytes 32) }}
{{- $_ := set .Values.secrets "keyEncryptionKeys" (get $existing "VIOLET_KEY_ENCRYPTION_KEYS" | b64dec | default $made) }}
{{- end }}
{{- if not .Values.secrets.vapidPrivateKey }}
{{- $_ := set .Values.secrets "vapidPrivateKey" (get $existing "VIOLET_VAPID_PRIVATE_KEY" | b64dec | default (genPrivateKey "ecdsa")) }}
{{- end }}
{{- if and .Values.qdrant.enabled (not .Values.qdrant.apiKey) }}
{{- $_ := set .Values.qdrant "apiKey" (get $existing "VIOLET_QDRANT_API_KEY" | b64dec | default (randAlphaNum 40)) }}
{{- end }}
{{- end }}

{{- define "violet.qdrantApiKey" -}}
{{- ternary .Values.qdrant.apiKey .Values.externalQdrant.apiKey .Values.qdrant.enabled }}
{{- end }}

{{- define "violet.databaseUrl" -}}
{{- if .Values.postgresql.enabled }}
{{- $pg := .Values.postgresql }}
{{- printf "postgresql+psycopg://%s:%s@%s:5432/%s" (urlquery $pg.username) (urlquery $pg.password) (include "violet.partName" (dict "root" . "name" "postgresql")) $pg.database }}
{{- else }}
{{- .Values.externalDatabase.url }}
{{- end }}
{{- end }}

{{/* The Secret's data (base64). */}}
{{- define "violet.secretData" -}}
{{- include "violet.resolveSecrets" . -}}
VIOLET_SECRET: {{ .Values.secrets.tokenSecret | b64enc | quote }}
VIOLET_OPERATOR_SECRET: {{ .Values.secrets.operatorSecret | b64enc | quote }}
VIOLET_DATABASE_URL: {{ include "violet.databaseUrl" . | b64enc | quote }}
VIOLET_DATABASE_SERVICE_PASSWORD: {{ .Values.secrets.databaseServicePassword | b64enc | quote }}
VIOLET_KEY_ENCRYPTION_KEYS: {{ .Values.secrets.keyEncryptionKeys | b64enc | quote }}
VIOLET_VAPID_PRIVATE_KEY: {{ .Values.secrets.vapidPrivateKey | b64enc | quote }}
{{- with .Values.secrets.anthropicApiKey }}
ANTHROPIC_API_KEY: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.secrets.smtpUrl }}
VIOLET_SMTP_URL: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.secrets.oidcClientSecret }}
VIOLET_OIDC_CLIENT_SECRET: {{ . | b64enc | quote }}
{{- end }}
{{- with include "violet.qdrantApiKey" . }}
VIOLET_QDRANT_API_KEY: {{ . | b64enc | quote }}
{{- end }}
{{- if .Values.postgresql.enabled }}
POSTGRES_PASSWORD: {{ .Values.postgresql.password | b64enc | quote }}
{{- end }}
{{- end }}

{{- define "violet.qdrantUrl" -}}
{{- if .Values.qdrant.enabled }}
{{- printf "http://%s:6333" (include "violet.partName" (dict "root" . "name" "qdrant")) }}
{{- else }}
{{- .Values.externalQdrant.url }}
{{- end }}
{{- end }}

{{- define "violet.otlpEndpoint" -}}
{{- if .Values.telemetry.otlpEndpoint }}
{{- .Values.telemetry.otlpEndpoint }}
{{- else if .Values.otelCollector.enabled }}
{{- $port := ternary 4318 4317 (eq .Values.telemetry.otlpProtocol "http/protobuf") }}
{{- printf "http://%s:%d" (include "violet.partName" (dict "root" . "name" "otel-collector")) $port }}
{{- end }}
{{- end }}

{{/* The ConfigMap's data: settings shared by every component. */}}
{{- define "violet.configData" -}}
{{- include "violet.validate" . }}
{{- $root := . -}}
VIOLET_HOME: /tmp/violet
{{- range $name, $c := fromYaml (include "violet.components" .) }}
{{ printf "VIOLET_%s_ADDR" ($name | upper | replace "-" "_") }}: {{ printf "%s:%v" (include "violet.partName" (dict "root" $root "name" $name)) $c.port | quote }}
{{- end }}
VIOLET_QDRANT_URL: {{ include "violet.qdrantUrl" . | quote }}
{{- if .Values.internalTls.enabled }}
VIOLET_GRPC_TLS: "on"
VIOLET_TLS_DIR: {{ include "violet.tlsMountPath" . | quote }}
{{- else }}
VIOLET_GRPC_TLS: "off"
{{- end }}
{{- with include "violet.otlpEndpoint" . }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ . | quote }}
OTEL_EXPORTER_OTLP_PROTOCOL: {{ $root.Values.telemetry.otlpProtocol | quote }}
{{- end }}
{{- range $key, $value := .Values.config }}
{{- if not (eq (toString $value) "") }}
{{ $key }}: {{ toString $value | quote }}
{{- end }}
{{- end }}
{{- with .Values.oidc }}
{{- if .issuer }}
VIOLET_OIDC_ISSUER: {{ .issuer | quote }}
VIOLET_OIDC_AUDIENCE: {{ .audience | quote }}
VIOLET_OIDC_PERSON_CLAIM: {{ .personClaim | quote }}
VIOLET_OIDC_ALLOW: {{ join "," .allow | quote }}
{{- with .jwksUrl }}
VIOLET_OIDC_JWKS_URL: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* The environment of a Violet container: the ConfigMap, its own secrets, and who it is.
Takes root, name, c, configMap, secret, and serving (whether it listens). */}}
{{- define "violet.env" -}}
{{- $root := .root }}
{{- $optional := list "ANTHROPIC_API_KEY" "VIOLET_SMTP_URL" "VIOLET_QDRANT_API_KEY" "VIOLET_DATABASE_SERVICE_PASSWORD" "VIOLET_OIDC_CLIENT_SECRET" -}}
envFrom:
  - configMapRef:
      name: {{ .configMap }}
env:
  {{- if .serving }}
  - name: VIOLET_LISTEN_ADDR
    value: {{ printf "%s:%v" $root.Values.listenHost .c.port | quote }}
  {{- if and (eq .c.protocol "grpc") $root.Values.internalTls.enabled }}
  - name: VIOLET_HEALTH_ADDR
    value: {{ printf "%s:%v" $root.Values.listenHost $root.Values.internalTls.probePort | quote }}
  {{- end }}
  {{- end }}
  {{- range .c.secretEnv }}
  - name: {{ . }}
    valueFrom:
      secretKeyRef:
        name: {{ $.secret }}
        key: {{ . }}
        {{- if has . $optional }}
        optional: true
        {{- end }}
  {{- end }}
  {{- if and .serving .c.workspaces }}
  - name: VIOLET_WORKSPACE_DIR
    value: {{ .c.workspaces.mountPath | quote }}
  {{- end }}
  - name: HOME
    value: /tmp
  - name: OTEL_SERVICE_NAME
    value: {{ .name | quote }}
  - name: K8S_POD_NAME
    valueFrom:
      fieldRef:
        fieldPath: metadata.name
  - name: OTEL_RESOURCE_ATTRIBUTES
    {{- $attributes := list "service.namespace=violet" (printf "service.version=%s" $root.Chart.AppVersion) (printf "k8s.namespace.name=%s" $root.Release.Namespace) "k8s.pod.name=$(K8S_POD_NAME)" }}
    {{- range $key, $value := $root.Values.telemetry.resourceAttributes }}
    {{- $attributes = append $attributes (printf "%s=%v" $key $value) }}
    {{- end }}
    value: {{ join "," $attributes | quote }}
  {{- range $key, $value := .c.env }}
  - name: {{ $key }}
    value: {{ toString $value | quote }}
  {{- end }}
{{- end }}

{{- define "violet.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .uid }}
runAsGroup: {{ .uid }}
fsGroup: {{ .uid }}
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "violet.containerSecurityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: [ALL]
{{- end }}

{{/* Pod settings shared by every Violet pod (Deployments and Jobs). */}}
{{- define "violet.podBasics" -}}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- include "violet.podSecurityContext" (dict "uid" 10001) | nindent 2 }}
{{- end }}

{{/* The readiness check: native gRPC health, or GET /healthz, which also reports what the
component depends on. */}}
{{- define "violet.readinessCheck" -}}
{{- if eq .c.protocol "grpc" -}}
grpc:
  port: {{ include "violet.probePort" . }}
{{- else -}}
httpGet:
  path: /healthz
  port: http
{{- end }}
{{- end }}

{{/* The startup and liveness check. For HTTP components it only asks whether the process takes
connections: restarting it would not bring back a dependency that /healthz finds down. */}}
{{- define "violet.livenessCheck" -}}
{{- if eq .c.protocol "grpc" -}}
grpc:
  port: {{ include "violet.probePort" . }}
{{- else -}}
tcpSocket:
  port: http
{{- end }}
{{- end }}

{{- define "violet.deployment" -}}
{{- $c := .c -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "violet.partName" . }}
  labels:
    {{- include "violet.labels" . | nindent 4 }}
spec:
  {{- if not $c.autoscaling.enabled }}
  replicas: {{ $c.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  selector:
    matchLabels:
      {{- include "violet.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "violet.selectorLabels" . | nindent 8 }}
      annotations:
        checksum/config: {{ include "violet.configData" .root | sha256sum }}
        {{- if not .root.Values.existingSecret }}
        checksum/secret: {{ include "violet.secretData" .root | sha256sum }}
        {{- end }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- include "violet.podBasics" .root | nindent 6 }}
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
      containers:
        - name: {{ .name }}
          image: {{ include "violet.image" . | quote }}
          imagePullPolicy: {{ .root.Values.image.pullPolicy }}
          ports:
            - name: {{ $c.protocol }}
              containerPort: {{ $c.port }}
              protocol: TCP
          {{- include "violet.env" (merge (dict "configMap" (include "violet.fullname" .root) "secret" (include "violet.secretName" .root) "serving" true) .) | nindent 10 }}
          startupProbe:
            {{- include "violet.livenessCheck" . | nindent 12 }}
            periodSeconds: 2
            failureThreshold: {{ $c.startupFailureThreshold }}
          readinessProbe:
            {{- include "violet.readinessCheck" . | nindent 12 }}
            {{- toYaml $c.probes.readiness | nindent 12 }}
          livenessProbe:
            {{- include "violet.livenessCheck" . | nindent 12 }}
            {{- toYaml $c.probes.liveness | nindent 12 }}
          lifecycle:
            preStop:
              {{- /* Endpoints stop sending new calls before the drain starts. */}}
              sleep:
                seconds: {{ $c.preStopSleepSeconds }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          securityContext:
            {{- include "violet.containerSecurityContext" . | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- include "violet.tlsMount" .root | nindent 12 }}
            {{- with $c.workspaces }}
            - name: workspaces
              mountPath: {{ .mountPath }}
            {{- end }}
      volumes:
        - name: tmp
          {{- if $c.tmpSizeLimit }}
          emptyDir:
            sizeLimit: {{ $c.tmpSizeLimit }}
          {{- else }}
          emptyDir: {}
          {{- end }}
        {{- include "violet.tlsVolume" . | nindent 8 }}
        {{- if $c.workspaces }}
        - name: workspaces
          persistentVolumeClaim:
            claimName: {{ include "violet.partName" . }}-workspaces
        {{- end }}
      {{- with $c.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- $pinned := and $c.workspaces (has "ReadWriteOnce" $c.workspaces.accessModes) }}
      {{- if $c.affinity }}
      affinity:
        {{- toYaml $c.affinity | nindent 8 }}
      {{- else if $pinned }}
      {{- /* A ReadWriteOnce volume attaches to one node: keep every replica on it. */}}
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels:
                  {{- include "violet.selectorLabels" . | nindent 18 }}
      {{- end }}
      {{- if $c.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml $c.topologySpreadConstraints | nindent 8 }}
      {{- else if and (not $pinned) (or $c.spread.nodes $c.spread.zones) }}
      {{- /* Nodes the pods may not run on (taints, node selectors) are no domains of the spread,
      and each rollout's pods (pod-template-hash) spread on their own. */}}
      topologySpreadConstraints:
        {{- range $key, $when := dict "kubernetes.io/hostname" $c.spread.nodes "topology.kubernetes.io/zone" $c.spread.zones }}
        {{- if $when }}
        - topologyKey: {{ $key }}
          maxSkew: 1
          whenUnsatisfiable: {{ $when }}
          nodeAffinityPolicy: Honor
          nodeTaintsPolicy: Honor
          labelSelector:
            matchLabels:
              {{- include "violet.selectorLabels" $ | nindent 14 }}
          matchLabelKeys: [pod-template-hash]
        {{- end }}
        {{- end }}
      {{- end }}
{{- end }}

{{- define "violet.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "violet.partName" . }}
  labels:
    {{- include "violet.labels" . | nindent 4 }}
  {{- with .c.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ .c.service.type }}
  selector:
    {{- include "violet.selectorLabels" . | nindent 4 }}
  ports:
    - name: {{ .c.protocol }}
      port: {{ .c.port }}
      targetPort: {{ .c.protocol }}
      protocol: TCP
{{- end }}

{{- define "violet.hpa" -}}
{{- $autoscaling := .c.autoscaling -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "violet.partName" . }}
  labels:
    {{- include "violet.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "violet.partName" . }}
  minReplicas: {{ $autoscaling.minReplicas }}
  maxReplicas: {{ $autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $autoscaling.targetCPUUtilizationPercentage }}
    {{- with $autoscaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ . }}
    {{- end }}
{{- end }}

{{- define "violet.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "violet.partName" . }}
  labels:
    {{- include "violet.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ .c.podDisruptionBudget.maxUnavailable }}
  # A pod that is not ready serves no one: a drain may always evict it, whatever the budget.
  unhealthyPodEvictionPolicy: AlwaysAllow
  selector:
    matchLabels:
      {{- include "violet.selectorLabels" . | nindent 6 }}
{{- end }}

{{/* Egress rules for what a part of the release needs: DNS, its callees, the databases, the
model API, the internet, the sign-in issuer, and the telemetry endpoint. Takes root, calls, needs. */}}
{{- define "violet.egressRules" -}}
{{- $root := .root }}
{{- $values := $root.Values }}
{{- $components := fromYaml (include "violet.components" $root) -}}
- to:
    {{- toYaml $values.networkPolicy.dnsPeers | nindent 4 }}
  ports:
    - {port: 53, protocol: UDP}
    - {port: 53, protocol: TCP}
{{- range .calls }}
{{- $callee := get $components . }}
{{- if not $callee }}
{{- fail (printf "%q is called but is not an enabled component." .) }}
{{- end }}
- to:
    {{- include "violet.componentsPeer" (dict "root" $root "names" (list .)) | nindent 4 }}
  ports:
    - {port: {{ $callee.port }}, protocol: TCP}
{{- end }}
{{- if has "database" .needs }}
{{- if $values.postgresql.enabled }}
- to:
    {{- include "violet.componentsPeer" (dict "root" $root "names" (list "postgresql")) | nindent 4 }}
  ports:
    - {port: 5432, protocol: TCP}
{{- else }}
- ports:
    - {port: {{ $values.externalDatabase.port }}, protocol: TCP}
  {{- with $values.externalDatabase.peers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}
{{- if has "qdrant" .needs }}
{{- if $values.qdrant.enabled }}
- to:
    {{- include "violet.componentsPeer" (dict "root" $root "names" (list "qdrant")) | nindent 4 }}
  ports:
    - {port: 6333, protocol: TCP}
    - {port: 6334, protocol: TCP}
{{- else }}
- ports:
    {{- range $values.externalQdrant.ports }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
  {{- with $values.externalQdrant.peers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}
{{- if has "modelApi" .needs }}
- to:
    {{- toYaml $values.networkPolicy.publicPeers | nindent 4 }}
  ports:
    {{- range $values.networkPolicy.modelApiPorts }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
{{- end }}
{{- if has "internet" .needs }}
- to:
    {{- toYaml $values.networkPolicy.publicPeers | nindent 4 }}
  ports:
    {{- range $values.networkPolicy.internetPorts }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
{{- end }}
{{- if has "pushServices" .needs }}
- to:
    {{- toYaml $values.networkPolicy.publicPeers | nindent 4 }}
  ports:
    - {port: 443, protocol: TCP}
{{- end }}
{{- if and (has "identityProvider" .needs) $values.oidc.issuer }}
- to:
    {{- toYaml ($values.oidc.peers | default $values.networkPolicy.publicPeers) | nindent 4 }}
  ports:
    {{- range $values.oidc.ports }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
{{- end }}
{{- if $values.otelCollector.enabled }}
- to:
    {{- include "violet.componentsPeer" (dict "root" $root "names" (list "otel-collector")) | nindent 4 }}
  ports:
    - {port: 4317, protocol: TCP}
    - {port: 4318, protocol: TCP}
{{- else if $values.telemetry.otlpEndpoint }}
- ports:
    {{- range $values.telemetry.ports }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
  {{- with $values.telemetry.peers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}

{{- define "violet.networkPolicy" -}}
{{- $callers := include "violet.callers" . | fromJsonArray -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "violet.partName" . }}
  labels:
    {{- include "violet.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "violet.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  {{- if or $callers .c.public }}
  ingress:
    {{- if $callers }}
    - from:
        {{- include "violet.componentsPeer" (dict "root" .root "names" $callers) | nindent 8 }}
      ports:
        - {port: {{ .c.port }}, protocol: TCP}
    {{- end }}
    {{- if .c.public }}
    - from:
        {{- toYaml .root.Values.networkPolicy.ingressControllerPeers | nindent 8 }}
      ports:
        - {port: {{ .c.port }}, protocol: TCP}
    {{- end }}
  {{- else }}
  ingress: []
  {{- end }}
  egress:
    {{- include "violet.egressRules" (dict "root" .root "calls" .c.calls "needs" .c.needs) | nindent 4 }}
{{- end }}

{{/* A container that runs one command of a component's image to completion. Takes root, name
(the component), c, command, configMap, secret and resources; with tls, its certificates for the
internal gRPC too (the pod then needs violet.tlsVolume). */}}
{{- define "violet.jobContainer" -}}
- name: {{ .name }}
  image: {{ include "violet.image" . | quote }}
  imagePullPolicy: {{ .root.Values.image.pullPolicy }}
  command: {{ .command | toJson }}
  {{- include "violet.env" (merge (dict "serving" false) .) | nindent 2 }}
  resources:
    {{- toYaml .resources | nindent 4 }}
  securityContext:
    {{- include "violet.containerSecurityContext" . | nindent 4 }}
  volumeMounts:
    - name: tmp
      mountPath: /tmp
    {{- if .tls }}
    {{- include "violet.tlsMount" .root | nindent 4 }}
    {{- end }}
{{- end }}

{{/* Where a component's certificates for the internal gRPC are mounted (violet.tls). */}}
{{- define "violet.tlsMountPath" -}}
/etc/violet/tls
{{- end }}

{{- define "violet.probePort" -}}
{{- ternary .root.Values.internalTls.probePort .c.port .root.Values.internalTls.enabled }}
{{- end }}

{{/* The component's TLS Secret: named in internalTls.secretNames, else RELEASE-COMPONENT-tls.
Takes root and name. */}}
{{- define "violet.tlsSecretName" -}}
{{- get .root.Values.internalTls.secretNames .name | default (printf "%s-tls" (include "violet.partName" .)) }}
{{- end }}

{{- define "violet.tlsMount" -}}
{{- if .Values.internalTls.enabled }}
- name: internal-tls
  mountPath: {{ include "violet.tlsMountPath" . }}
  readOnly: true
{{- end }}
{{- end }}

{{/* Takes root and name. */}}
{{- define "violet.tlsVolume" -}}
{{- if .root.Values.internalTls.enabled }}
- name: internal-tls
  secret:
    secretName: {{ include "violet.tlsSecretName" . }}
    defaultMode: 0440
{{- end }}
{{- end }}

{{/* Annotations of the migration hook's parts; lower weights are created first. */}}
{{- define "violet.migrationHook" -}}
{{- /* The bundled PostgreSQL is created with the release, so a first install migrates right
after it; the services also migrate on start, so they wait for it rather than fail. */ -}}
helm.sh/hook: {{ ternary "post-install,pre-upgrade" "pre-install,pre-upgrade" .root.Values.postgresql.enabled }}
helm.sh/hook-weight: {{ .weight | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}
