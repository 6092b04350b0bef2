"""The Helm chart, rendered offline with each CI values file: strictly valid Kubernetes 1.32
manifests, locked-down pods, and the wiring the architecture asks for."""

from __future__ import annotations

import base64
import copy
import importlib.metadata
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from violet.keyring import parse_keyring
from violet.push import VapidKeys, from_b64url

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "violet"
VALUES_DIR = REPO / "deploy" / "helm" / "values"
VALUES_FILES = sorted(VALUES_DIR.glob("*.yaml"))
KUBERNETES_VERSION = "1.32"
RELEASE = "violet"
NAMESPACE = "violet"
SERVICES = {"gateway": 8080, "session": 50051, "router": 50052, "memory": 50053, "worker": 50054}
GRPC_SERVICES = {name for name in SERVICES if name != "gateway"}
MIGRATING = ["memory", "router", "session", "worker"]
PROBE_PORT = 8081
SECRET_KEYS = {
    "ANTHROPIC_API_KEY",
    "VIOLET_SECRET",
    "VIOLET_OPERATOR_SECRET",
    "VIOLET_DATABASE_URL",
    "VIOLET_DATABASE_SERVICE_PASSWORD",
    "VIOLET_SMTP_URL",
    "VIOLET_QDRANT_API_KEY",
    "VIOLET_OIDC_CLIENT_SECRET",
    "QDRANT__SERVICE__API_KEY",
    "VIOLET_KEY_ENCRYPTION_KEYS",
    "VIOLET_VAPID_PRIVATE_KEY",
}
POD_OWNERS = {"Deployment", "StatefulSet", "Job", "CronJob"}

Manifest = dict[str, Any]


@dataclass(frozen=True)
class Rendered:
    manifests: list[Manifest]

    def of_kind(self, kind: str) -> list[Manifest]:
        return [m for m in self.manifests if m["kind"] == kind]

    def named(self, kind: str, name: str) -> Manifest:
        matches = [m for m in self.of_kind(kind) if m["metadata"]["name"] == name]
        assert matches, f"no {kind} {name}; the chart made {self.names(kind)}"
        return matches[0]

    def names(self, kind: str) -> set[str]:
        return {m["metadata"]["name"] for m in self.of_kind(kind)}

    def pods(self) -> Iterator[tuple[str, Manifest]]:
        """(owner's kind/name, pod template) for every workload."""
        for manifest in self.manifests:
            if manifest["kind"] not in POD_OWNERS:
                continue
            spec = manifest["spec"]
            if manifest["kind"] == "CronJob":
                spec = spec["jobTemplate"]["spec"]
            yield f"{manifest['kind']}/{manifest['metadata']['name']}", spec["template"]

    def deployment(self, component: str) -> Manifest:
        return self.named("Deployment", f"{RELEASE}-{component}")

    def config(self) -> dict[str, str]:
        """The settings every component reads (not the migration hook's copy)."""
        [shared] = [
            m for m in self.of_kind("ConfigMap") if m["metadata"]["name"].endswith("violet")
        ]
        return shared["data"]


def containers(pod_spec: Manifest) -> list[Manifest]:
    return [*pod_spec.get("initContainers", []), *pod_spec["containers"]]


def env_of(container: Manifest) -> dict[str, Manifest]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def decoded(secret: Manifest) -> dict[str, str]:
    return {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}


def hook_weight(manifest: Manifest) -> int:
    return int(manifest["metadata"]["annotations"]["helm.sh/hook-weight"])


def hooks_of(manifest: Manifest) -> set[str]:
    annotations = manifest["metadata"].get("annotations") or {}
    return set(filter(None, annotations.get("helm.sh/hook", "").split(",")))


def merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result


def values_file(name: str) -> dict[str, Any]:
    return yaml.safe_load((VALUES_DIR / f"{name}.yaml").read_text()) or {}


@cache
def loaded_chart() -> helm.Chart:
    return helm.Chart.load(CHART)


def parsed(templates: dict[str, str]) -> Rendered:
    return Rendered(
        [
            document
            for path, text in sorted(templates.items())
            if path.endswith(".yaml")
            for document in yaml.safe_load_all(text)
            if document
        ]
    )


@cache
def _render(values_json: str) -> Rendered:
    return parsed(loaded_chart().render(json.loads(values_json), name=RELEASE, namespace=NAMESPACE))


def render(values: dict[str, Any]) -> Rendered:
    return _render(json.dumps(values, sort_keys=True))


@pytest.fixture(params=VALUES_FILES, ids=[path.stem for path in VALUES_FILES])
def values(request: pytest.FixtureRequest) -> dict[str, Any]:
    return values_file(request.param.stem)


@pytest.fixture
def rendered(values: dict[str, Any]) -> Rendered:
    return render(values)


def test_ci_renders_defaults_external_databases_and_everything() -> None:
    assert {path.stem for path in VALUES_FILES} >= {"defaults", "external", "everything"}


def test_chart_lints_strictly(values: dict[str, Any]) -> None:
    report = helm.lint(CHART, values, strict=True, kube_version=f"v{KUBERNETES_VERSION}.0")
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert not report["errors"] and not problems, report


def test_every_manifest_is_valid_kubernetes_strictly(rendered: Rendered) -> None:
    failures = []
    for manifest in rendered.manifests:
        try:
            kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(part) for part in error.path)
            failures.append(f"{manifest['kind']}/{manifest['metadata']['name']} {path}: {error}")
    assert not failures, "\n".join(failures)


def pinned_to_one_node(deployment: Manifest) -> bool:
    """Replicas kept on one node by a ReadWriteOnce volume (a required pod affinity)."""
    affinity = deployment["spec"]["template"]["spec"].get("affinity", {})
    return "requiredDuringSchedulingIgnoredDuringExecution" in affinity.get("podAffinity", {})


def test_every_service_has_deployment_service_autoscaler_and_disruption_budget(
    rendered: Rendered,
) -> None:
    autoscaled = rendered.names("HorizontalPodAutoscaler")
    for name in SERVICES:
        part = f"{RELEASE}-{name}"
        deployment = rendered.deployment(name)
        assert part in rendered.names("Service")
        # Replicas pinned to one node get no budget: it could only stall that node's drain.
        has_budget = part in rendered.names("PodDisruptionBudget")
        assert has_budget != pinned_to_one_node(deployment), part
        # Either the autoscaler owns the replica count or the values fix it; never both.
        assert (part in autoscaled) != ("replicas" in deployment["spec"]), part
    for autoscaler in rendered.of_kind("HorizontalPodAutoscaler"):
        assert autoscaler["apiVersion"] == "autoscaling/v2"
        assert autoscaler["spec"]["scaleTargetRef"]["name"] == autoscaler["metadata"]["name"]


def fewest_replicas(rendered: Rendered, part: str) -> int:
    """The fewest pods a Deployment may run: its autoscaler's floor, or its fixed count."""
    autoscalers = [
        a for a in rendered.of_kind("HorizontalPodAutoscaler") if a["metadata"]["name"] == part
    ]
    if autoscalers:
        return autoscalers[0]["spec"]["minReplicas"]
    return rendered.named("Deployment", part)["spec"]["replicas"]


def test_disruption_budgets_agree_with_the_replica_counts(rendered: Rendered) -> None:
    """A drain takes one pod at a time and never the last one, and never stalls on a budget."""
    for budget in rendered.of_kind("PodDisruptionBudget"):
        part = budget["metadata"]["name"]
        fewest = fewest_replicas(rendered, part)
        down = budget["spec"]["maxUnavailable"]
        assert "minAvailable" not in budget["spec"], part
        assert isinstance(down, int) and 1 <= down < fewest, (part, down, fewest)
        assert budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow", part
        deployment = rendered.named("Deployment", part)
        assert budget["spec"]["selector"]["matchLabels"].items() <= (
            deployment["spec"]["template"]["metadata"]["labels"].items()
        )


def spread_of(deployment: Manifest) -> dict[str, Manifest]:
    constraints = deployment["spec"]["template"]["spec"].get("topologySpreadConstraints", [])
    return {constraint["topologyKey"]: constraint for constraint in constraints}


def test_replicas_spread_across_nodes_and_zones(rendered: Rendered) -> None:
    for name in SERVICES:
        deployment = rendered.deployment(name)
        spread = spread_of(deployment)
        if pinned_to_one_node(deployment):
            assert not spread, name  # a hard spread would leave the pinned replicas unscheduled
            continue
        nodes, zones = spread["kubernetes.io/hostname"], spread["topology.kubernetes.io/zone"]
        assert (nodes["whenUnsatisfiable"], nodes["maxSkew"]) == ("DoNotSchedule", 1), name
        assert zones["whenUnsatisfiable"] == "ScheduleAnyway", name
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        for constraint in (nodes, zones):
            assert selects(constraint["labelSelector"], labels), name
            assert constraint["nodeTaintsPolicy"] == "Honor", name
            assert constraint["matchLabelKeys"] == ["pod-template-hash"], name


def test_the_worker_spreads_like_the_others_on_a_shared_volume() -> None:
    rendered = render(values_file("everything"))
    worker = rendered.deployment("worker")
    assert not pinned_to_one_node(worker)
    assert set(spread_of(worker)) == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
    assert f"{RELEASE}-worker" in rendered.names("PodDisruptionBudget")


def test_spreading_follows_the_values() -> None:
    no_zones = render({"componentDefaults": {"spread": {"zones": ""}}})
    assert set(spread_of(no_zones.deployment("session"))) == {"kubernetes.io/hostname"}
    own = [{"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway"}]
    custom = render({"components": {"router": {"topologySpreadConstraints": own}}})
    assert (
        custom.deployment("router")["spec"]["template"]["spec"]["topologySpreadConstraints"] == own
    )


def test_grpc_services_have_native_grpc_probes_and_the_gateway_http_health(
    values: dict[str, Any], rendered: Rendered
) -> None:
    tls = values.get("internalTls", {}).get("enabled", True)
    for name, port in SERVICES.items():
        [container] = rendered.deployment(name)["spec"]["template"]["spec"]["containers"]
        readiness, liveness = container["readinessProbe"], container["livenessProbe"]
        if name in GRPC_SERVICES:
            # The kubelet cannot speak TLS: with it on, health alone is asked in plain text.
            probed = PROBE_PORT if tls else port
            assert readiness["grpc"] == {"port": probed}
            assert liveness["grpc"] == {"port": probed}
            health_addr = env_of(container).get("VIOLET_HEALTH_ADDR", {}).get("value")
            assert health_addr == (f"0.0.0.0:{PROBE_PORT}" if tls else None)
        else:
            assert readiness["httpGet"] == {"path": "/healthz", "port": "http"}
            assert liveness["tcpSocket"] == {"port": "http"}


def test_every_container_has_resource_requests_and_limits(rendered: Rendered) -> None:
    for owner, pod in rendered.pods():
        for container in containers(pod["spec"]):
            resources = container.get("resources", {})
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(bound, {})), (
                    f"{owner} {container['name']} lacks {bound}"
                )


def test_every_pod_is_locked_down(rendered: Rendered) -> None:
    for owner, pod in rendered.pods():
        spec = pod["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True, owner
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, owner
        assert spec["automountServiceAccountToken"] is False, owner
        tmp_volumes = {v["name"] for v in spec["volumes"] if "emptyDir" in v}
        for container in containers(pod["spec"]):
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, owner
            assert context["readOnlyRootFilesystem"] is True, owner
            assert context["capabilities"] == {"drop": ["ALL"]}, owner
            tmp = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
            assert tmp and tmp[0]["name"] in tmp_volumes, f"{owner} has no writable /tmp"


def selects(selector: Manifest, labels: dict[str, str]) -> bool:
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    return all(
        expression["operator"] == "In" and labels.get(expression["key"]) in expression["values"]
        for expression in selector.get("matchExpressions", [])
    )


def test_every_pod_is_selected_by_a_network_policy(rendered: Rendered) -> None:
    policies = rendered.of_kind("NetworkPolicy")
    for owner, pod in rendered.pods():
        labels = pod["metadata"]["labels"]
        covering = [p for p in policies if selects(p["spec"]["podSelector"], labels)]
        assert covering, f"no NetworkPolicy selects {owner}"
        assert "Ingress" in covering[0]["spec"]["policyTypes"], owner


def admitted_components(policy: Manifest) -> set[str]:
    admitted = set()
    for rule in policy["spec"].get("ingress", []):
        for peer in rule["from"]:
            for expression in peer.get("podSelector", {}).get("matchExpressions", []):
                admitted |= set(expression["values"])
    return admitted


def test_each_service_admits_only_its_callers(rendered: Rendered) -> None:
    callers = {
        "gateway": set(),
        "session": {"gateway", "worker", "router", "memory"},
        "router": {"session", "worker"},
        "memory": {"session", "gateway"},
        "worker": {"session", "gateway"},
    }
    for name, expected in callers.items():
        policy = rendered.named("NetworkPolicy", f"{RELEASE}-{name}")
        assert admitted_components(policy) == expected, name
        for rule in policy["spec"].get("ingress", []):
            assert rule["ports"] == [{"port": SERVICES[name], "protocol": "TCP"}]


def test_only_the_gateway_is_exposed(rendered: Rendered) -> None:
    for service in rendered.of_kind("Service"):
        if service["metadata"]["name"] != f"{RELEASE}-gateway":
            assert service["spec"].get("type", "ClusterIP") == "ClusterIP", service["metadata"]
    for ingress in rendered.of_kind("Ingress"):
        backends = {
            path["backend"]["service"]["name"]
            for rule in ingress["spec"]["rules"]
            for path in rule["http"]["paths"]
        }
        assert backends == {f"{RELEASE}-gateway"}
    for policy in rendered.of_kind("NetworkPolicy"):
        outside_peers = [
            peer
            for rule in policy["spec"].get("ingress", [])
            for peer in rule["from"]
            if "namespaceSelector" in peer or "ipBlock" in peer
        ]
        if policy["metadata"]["name"] != f"{RELEASE}-gateway":
            assert not outside_peers, policy["metadata"]["name"]


def test_the_gateway_takes_traffic_from_the_ingress_controller_only() -> None:
    policy = render({}).named("NetworkPolicy", f"{RELEASE}-gateway")
    [rule] = policy["spec"]["ingress"]
    assert rule["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}
    ]


def test_migrations_run_before_the_deployments_on_every_upgrade(rendered: Rendered) -> None:
    job = rendered.named("Job", f"{RELEASE}-migrate")
    assert "pre-upgrade" in hooks_of(job)
    assert not any(hooks_of(d) for d in rendered.of_kind("Deployment"))
    pod = job["spec"]["template"]["spec"]
    commands = [container["command"] for container in containers(pod)]
    assert commands == [["python", "-m", name, "migrate"] for name in MIGRATING]
    assert pod["restartPolicy"] == "Never"


def test_the_migration_hook_brings_its_own_settings_created_before_it(rendered: Rendered) -> None:
    job = rendered.named("Job", f"{RELEASE}-migrate")
    hook_parts = [
        m for m in rendered.manifests if m["kind"] in ("ConfigMap", "Secret") and hooks_of(m)
    ]
    assert {m["kind"] for m in hook_parts} == {"ConfigMap", "Secret"}
    for part in hook_parts:
        assert hooks_of(part) == hooks_of(job)
        assert hook_weight(part) < hook_weight(job)
    pod = job["spec"]["template"]["spec"]
    names = {part["metadata"]["name"] for part in hook_parts}
    for container in containers(pod):
        assert {ref["configMapRef"]["name"] for ref in container["envFrom"]} <= names
        for entry in env_of(container).values():
            if "secretKeyRef" in entry.get("valueFrom", {}):
                assert entry["valueFrom"]["secretKeyRef"]["name"] in names


def test_with_an_external_database_migrations_run_before_the_first_install() -> None:
    job = render(values_file("external")).named("Job", f"{RELEASE}-migrate")
    assert hooks_of(job) == {"pre-install", "pre-upgrade"}


def test_with_the_bundled_database_the_first_migration_waits_for_it() -> None:
    job = render({}).named("Job", f"{RELEASE}-migrate")
    assert hooks_of(job) == {"post-install", "pre-upgrade"}


CANARIES = {
    "secrets": {
        "anthropicApiKey": "sk-ant-canary-key",
        "tokenSecret": "canary-token-secret",
        "smtpUrl": "smtp://mail:canary-smtp-password@smtp.example.com:587",
        "oidcClientSecret": "canary-client-secret",
        "keyEncryptionKeys": "canary:Y2FuYXJ5LWtleS1lbmNyeXB0aW9uLWtleS0zMmJ5dGU=",
    },
    "postgresql": {"password": "canary-database-password"},
    "externalDatabase": {"url": "postgresql://violet:canary-external-password@db.example:5432/v"},
}


def test_secrets_never_appear_in_a_config_map(values: dict[str, Any]) -> None:
    with_canaries = merged(values, CANARIES)
    rendered = render(with_canaries)
    bundled = with_canaries.get("postgresql", {}).get("enabled", True)
    canaries = ["canary-key", "canary-token", "canary-smtp", "canary-client", "Y2FuYXJ5LWtle"]
    canaries.append("canary-database" if bundled else "canary-external")
    secret_text = json.dumps([decoded(s) for s in rendered.of_kind("Secret")])
    assert all(canary in secret_text for canary in canaries), "the Secret holds them all"
    for config_map in rendered.of_kind("ConfigMap"):
        data = config_map.get("data", {})
        assert not SECRET_KEYS & set(data), config_map["metadata"]["name"]
        text = json.dumps(data)
        assert not [c for c in canaries if c in text], config_map["metadata"]["name"]


def test_secret_settings_reach_the_containers_only_from_the_secret(rendered: Rendered) -> None:
    for owner, pod in rendered.pods():
        for container in containers(pod["spec"]):
            for name, entry in env_of(container).items():
                if name in SECRET_KEYS:
                    assert "secretKeyRef" in entry.get("valueFrom", {}), f"{owner} {name}"


def test_an_existing_secret_replaces_the_charts_secrets() -> None:
    rendered = render({"existingSecret": "violet-secrets"})
    assert not rendered.of_kind("Secret")
    referenced = {
        entry["valueFrom"]["secretKeyRef"]["name"]
        for _, pod in rendered.pods()
        for container in containers(pod["spec"])
        for entry in container.get("env", [])
        if "secretKeyRef" in entry.get("valueFrom", {})
    }
    assert referenced == {"violet-secrets"}


def test_generated_secrets_agree_between_the_release_and_the_migration_hook() -> None:
    rendered = render({})
    release = decoded(rendered.named("Secret", RELEASE))
    hook = decoded(rendered.named("Secret", f"{RELEASE}-migrate"))
    assert release == hook
    assert len(release["VIOLET_SECRET"]) >= 32
    assert parse_keyring(release["VIOLET_KEY_ENCRYPTION_KEYS"]).current.startswith("k")
    # The notifications' signing key, made by Helm, is one the session can sign with.
    vapid = VapidKeys.from_pem(release["VIOLET_VAPID_PRIVATE_KEY"])
    assert len(from_b64url(vapid.public_key_b64)) == 65
    assert (
        f":{release['POSTGRES_PASSWORD']}@{RELEASE}-postgresql:5432/"
        in release["VIOLET_DATABASE_URL"]
    )


def test_a_new_component_is_a_few_lines_of_values() -> None:
    rendered = render(
        {"components": {"search": {"port": 50055, "calls": ["memory"], "needs": ["database"]}}}
    )
    part = f"{RELEASE}-search"
    for kind in ("Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"):
        assert part in rendered.names(kind), kind
    assert rendered.config()["VIOLET_SEARCH_ADDR"] == f"{part}:50055"
    assert "search" in admitted_components(rendered.named("NetworkPolicy", f"{RELEASE}-memory"))
    [container] = rendered.deployment("search")["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "violet-search:0.1.0"
    assert container["readinessProbe"]["grpc"] == {"port": PROBE_PORT}
    for manifest in rendered.manifests:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)


def test_a_component_can_be_switched_off() -> None:
    without_worker = {
        "worker": {"enabled": False},
        "session": {"calls": []},
        "gateway": {"calls": ["session", "memory"]},
    }
    rendered = render({"components": without_worker})
    assert f"{RELEASE}-worker" not in rendered.names("Deployment")
    assert "VIOLET_WORKER_ADDR" not in rendered.config()


def test_services_bind_everywhere_and_find_each_other_by_service_name(rendered: Rendered) -> None:
    config = rendered.config()
    for name, port in SERVICES.items():
        assert config[f"VIOLET_{name.upper()}_ADDR"] == f"{RELEASE}-{name}:{port}"
        [container] = rendered.deployment(name)["spec"]["template"]["spec"]["containers"]
        assert env_of(container)["VIOLET_LISTEN_ADDR"]["value"] == f"0.0.0.0:{port}"
        assert container["envFrom"] == [{"configMapRef": {"name": RELEASE}}]


def test_names_follow_the_release_so_two_releases_can_share_a_namespace() -> None:
    rendered = parsed(loaded_chart().render({}, name="staging", namespace=NAMESPACE))
    assert rendered.config()["VIOLET_SESSION_ADDR"] == "staging-violet-session:50051"
    for manifest in rendered.manifests:
        assert manifest["metadata"]["name"].startswith("staging-violet"), manifest["metadata"]
    for policy in rendered.of_kind("NetworkPolicy"):
        labels = policy["spec"]["podSelector"]["matchLabels"]
        assert labels["app.kubernetes.io/instance"] == "staging"


def test_worker_workspaces_live_on_a_kept_persistent_volume_claim() -> None:
    rendered = render({})
    claim = rendered.named("PersistentVolumeClaim", f"{RELEASE}-worker-workspaces")
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    pod = rendered.deployment("worker")["spec"]["template"]["spec"]
    [container] = pod["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert env_of(container)["VIOLET_WORKSPACE_DIR"]["value"] == mounts["workspaces"]
    [volume] = [v for v in pod["volumes"] if v["name"] == "workspaces"]
    assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    # A ReadWriteOnce claim attaches to one node, so the replicas are kept together.
    [term] = pod["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "worker"


def test_services_and_their_migrations_get_the_password_of_the_services_own_roles() -> None:
    rendered = render({})
    password = decoded(rendered.named("Secret", RELEASE))["VIOLET_DATABASE_SERVICE_PASSWORD"]
    assert (
        len(password) >= 32
        and password not in decoded(rendered.named("Secret", RELEASE))["VIOLET_DATABASE_URL"]
    )
    migrating = [
        *(rendered.deployment(name)["spec"]["template"] for name in MIGRATING),
        rendered.named("Job", f"{RELEASE}-migrate")["spec"]["template"],
    ]
    for pod in migrating:
        for container in containers(pod["spec"]):
            assert "VIOLET_DATABASE_SERVICE_PASSWORD" in env_of(container), container["name"]


def test_memory_sleep_pass_is_a_cron_job_of_the_memory_image(rendered: Rendered) -> None:
    cron = rendered.named("CronJob", f"{RELEASE}-memory-sleep")
    [container] = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["python", "-m", "memory", "sleep"]
    assert container["image"] == "violet-memory:0.1.0"
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"


def test_the_sleep_schedule_and_time_zone_come_from_values() -> None:
    default = render({}).named("CronJob", f"{RELEASE}-memory-sleep")["spec"]
    assert default["schedule"] == "30 3 * * *"
    custom = render(values_file("everything")).named("CronJob", f"{RELEASE}-memory-sleep")["spec"]
    assert (custom["schedule"], custom["timeZone"]) == ("0 4 * * *", "Europe/Berlin")


def test_telemetry_uses_the_standard_otel_variables() -> None:
    everything = render(values_file("everything"))
    assert everything.config()["OTEL_EXPORTER_OTLP_ENDPOINT"] == (
        f"http://{RELEASE}-otel-collector:4318"
    )
    assert everything.config()["OTEL_EXPORTER_OTLP_PROTOCOL"] == "http/protobuf"
    grpc_collector = render({"otelCollector": {"enabled": True}}).config()
    assert grpc_collector["OTEL_EXPORTER_OTLP_ENDPOINT"] == f"http://{RELEASE}-otel-collector:4317"
    assert grpc_collector["OTEL_EXPORTER_OTLP_PROTOCOL"] == "grpc"
    assert f"{RELEASE}-otel-collector" in everything.names("Deployment")
    for name in SERVICES:
        [container] = everything.deployment(name)["spec"]["template"]["spec"]["containers"]
        env = env_of(container)
        assert env["OTEL_SERVICE_NAME"]["value"] == name
        assert "deployment.environment.name=staging" in env["OTEL_RESOURCE_ATTRIBUTES"]["value"]
    external = render(values_file("external")).config()
    assert external["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector.observability.svc:4317"
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in render({}).config()


def test_sign_in_through_an_issuer_and_its_client_secret_reach_the_gateway_and_only_it() -> None:
    everything = render(values_file("everything"))
    issuer = values_file("everything")["oidc"]
    config = everything.config()
    assert config["VIOLET_OIDC_ISSUER"] == issuer["issuer"]
    assert config["VIOLET_OIDC_AUDIENCE"] == issuer["audience"]
    assert config["VIOLET_OIDC_PERSON_CLAIM"] == "sub"
    assert config["VIOLET_OIDC_ALLOW"] == ",".join(issuer["allow"])
    policies = {p["metadata"]["name"]: p for p in everything.of_kind("NetworkPolicy")}
    issuer_ports = {"ports": [{"port": 443, "protocol": "TCP"}]}
    gateway_egress = policies[f"{RELEASE}-gateway"]["spec"]["egress"]
    assert any(rule.get("ports") == issuer_ports["ports"] for rule in gateway_egress)
    assert (
        decoded(everything.named("Secret", RELEASE))["VIOLET_OIDC_CLIENT_SECRET"]
        == (values_file("everything")["secrets"]["oidcClientSecret"])
    )
    for component in ("gateway", "session", "memory", "router", "worker"):
        [container] = everything.deployment(component)["spec"]["template"]["spec"]["containers"]
        reads_it = "VIOLET_OIDC_CLIENT_SECRET" in env_of(container)
        assert reads_it == (component == "gateway"), component
    local_only = render({})
    assert not any(key.startswith("VIOLET_OIDC_") for key in local_only.config())
    assert "VIOLET_OIDC_CLIENT_SECRET" not in decoded(local_only.named("Secret", RELEASE))
    gateway = {p["metadata"]["name"]: p for p in local_only.of_kind("NetworkPolicy")}
    assert all(
        {"port": 443, "protocol": "TCP"} not in rule.get("ports", [])
        for rule in gateway[f"{RELEASE}-gateway"]["spec"]["egress"]
    )


def test_only_the_session_holds_the_operator_secret_and_it_is_its_own() -> None:
    everything = render(values_file("everything"))
    secret = decoded(everything.named("Secret", RELEASE))
    assert len(secret["VIOLET_OPERATOR_SECRET"]) >= 32
    assert secret["VIOLET_OPERATOR_SECRET"] != secret["VIOLET_SECRET"]
    for component in ("gateway", "session", "memory", "router", "worker"):
        [container] = everything.deployment(component)["spec"]["template"]["spec"]["containers"]
        reads_it = "VIOLET_OPERATOR_SECRET" in env_of(container)
        assert reads_it == (component == "session"), component


def test_internal_grpc_is_tls_by_default_each_component_with_its_own_certificate() -> None:
    everything = render(values_file("everything"))
    assert everything.config()["VIOLET_GRPC_TLS"] == "on"
    assert everything.config()["VIOLET_TLS_DIR"] == "/etc/violet/tls"
    own = {"session": "violet-session-certificate"}
    for component in SERVICES:
        pod = everything.deployment(component)["spec"]["template"]["spec"]
        [container] = pod["containers"]
        mount = {m["name"]: m for m in container["volumeMounts"]}["internal-tls"]
        assert mount == {"name": "internal-tls", "mountPath": "/etc/violet/tls", "readOnly": True}
        volume = {v["name"]: v for v in pod["volumes"]}["internal-tls"]
        expected = own.get(component, f"{RELEASE}-{component}-tls")
        assert volume["secret"]["secretName"] == expected, component
    # The daily retention calls memory, the router and the worker: it shows the session's.
    for cron in everything.of_kind("CronJob"):
        pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        assert "internal-tls" in {v["name"] for v in pod["volumes"]}
        [container] = pod["containers"]
        assert "internal-tls" in {m["name"] for m in container["volumeMounts"]}
    plain = render(values_file("external"))
    assert plain.config()["VIOLET_GRPC_TLS"] == "off"
    assert "VIOLET_TLS_DIR" not in plain.config()
    for _, pod in plain.pods():
        assert "internal-tls" not in {v["name"] for v in pod["spec"].get("volumes", [])}


def test_bundled_databases_run_only_when_switched_on() -> None:
    bundled = render({})
    assert bundled.names("StatefulSet") == {f"{RELEASE}-postgresql", f"{RELEASE}-qdrant"}
    for statefulset in bundled.of_kind("StatefulSet"):
        assert statefulset["spec"]["volumeClaimTemplates"], statefulset["metadata"]["name"]
    assert bundled.config()["VIOLET_QDRANT_URL"] == f"http://{RELEASE}-qdrant:6333"

    external_values = values_file("external")
    external = render(external_values)
    assert not external.of_kind("StatefulSet")
    assert external.config()["VIOLET_QDRANT_URL"] == external_values["externalQdrant"]["url"]
    secret = external.named("Secret", RELEASE)
    assert decoded(secret)["VIOLET_DATABASE_URL"] == external_values["externalDatabase"]["url"]


def test_the_ingress_carries_the_websocket_with_tls_from_values() -> None:
    rendered = render(values_file("everything"))
    [ingress] = rendered.of_kind("Ingress")
    assert ingress["spec"]["tls"] == [
        {"hosts": ["violet.example.com"], "secretName": "violet-example-tls"}
    ]
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] == "3600"
    assert not render({}).of_kind("Ingress")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"postgresql": {"enabled": False}}, "Violet needs a database"),
        ({"qdrant": {"enabled": False}}, "Violet needs Qdrant"),
        ({"config": {"VIOLET_SECRET": "in-the-open"}}, "/config"),
        ({"components": {"session": {"calls": ["nowhere"]}}}, "nowhere"),
        ({"oidc": {"issuer": "https://id.example.com"}}, "oidc.issuer needs oidc.audience"),
        (
            {"components": {"worker": {"env": {"VIOLET_SANDBOX_BACKEND": "bubblewrap"}}}},
            "the bubblewrap sandbox needs user namespaces",
        ),
        (
            {"components": {"router": {"autoscaling": {"minReplicas": 1}}}},
            "components.router: autoscaling.minReplicas is 1",
        ),
        (
            {"components": {"session": {"autoscaling": {"enabled": False}, "replicas": 1}}},
            "components.session: replicas is 1",
        ),
        (
            {"components": {"gateway": {"podDisruptionBudget": {"maxUnavailable": 2}}}},
            "lets all 2 pods go at once",
        ),
        (
            {"components": {"gateway": {"podDisruptionBudget": {"maxUnavailable": 0}}}},
            "maxUnavailable",
        ),
        (
            {"components": {"worker": {"podDisruptionBudget": {"enabled": True}}}},
            "ReadWriteOnce workspace",
        ),
    ],
    ids=[
        "no-database",
        "no-qdrant",
        "secret-in-config",
        "unknown-callee",
        "issuer-without-audience",
        "bubblewrap-in-locked-down-pods",
        "one-replica-autoscaled",
        "one-replica-fixed",
        "budget-takes-all",
        "budget-stalls-drains",
        "budget-on-one-node",
    ],
)
def test_values_that_cannot_work_are_refused_with_a_reason(
    values: dict[str, Any], message: str
) -> None:
    with pytest.raises(helm.HelmError, match=message):
        loaded_chart().render(values, name=RELEASE, namespace=NAMESPACE)


def test_the_bundled_qdrant_matches_the_client_the_images_carry() -> None:
    image = render({}).named("StatefulSet", f"{RELEASE}-qdrant")["spec"]["template"]["spec"][
        "containers"
    ][0]["image"]
    server = re.search(r":v(\d+)\.(\d+)\.\d+", image)
    assert server, image
    client = importlib.metadata.version("qdrant-client").split(".")[:2]
    assert list(server.groups()) == client, f"{image} against qdrant-client {client}"


def test_the_bundled_qdrant_requires_the_key_its_clients_carry() -> None:
    rendered = render({})
    key = decoded(rendered.named("Secret", RELEASE))["VIOLET_QDRANT_API_KEY"]
    assert len(key) >= 32
    [qdrant] = rendered.named("StatefulSet", f"{RELEASE}-qdrant")["spec"]["template"]["spec"][
        "containers"
    ]
    server_key = env_of(qdrant)["QDRANT__SERVICE__API_KEY"]["valueFrom"]["secretKeyRef"]
    assert (server_key["name"], server_key["key"]) == (RELEASE, "VIOLET_QDRANT_API_KEY")
    for name in ("memory", "router"):
        [container] = rendered.deployment(name)["spec"]["template"]["spec"]["containers"]
        client_key = env_of(container)["VIOLET_QDRANT_API_KEY"]["valueFrom"]["secretKeyRef"]
        assert (client_key["name"], client_key["key"]) == (RELEASE, "VIOLET_QDRANT_API_KEY")
    for name in ("gateway", "session", "worker"):
        [container] = rendered.deployment(name)["spec"]["template"]["spec"]["containers"]
        assert "VIOLET_QDRANT_API_KEY" not in env_of(container), name


def test_an_external_qdrant_gets_its_key_from_the_secret() -> None:
    external_values = values_file("external")
    rendered = render(external_values)
    secret = decoded(rendered.named("Secret", RELEASE))
    assert secret["VIOLET_QDRANT_API_KEY"] == external_values["externalQdrant"]["apiKey"]
    assert rendered.config()["VIOLET_QDRANT_URL"].startswith("https://")


def named_parts(cell: str) -> set[str]:
    """The parts a table cell names, without its remarks in parentheses."""
    names = re.sub(r"\(.*?\)", "", cell).split(",")
    return {name.strip(" `") for name in names} - {"nobody", ""}


def documented_calls() -> dict[str, tuple[set[str], set[str]]]:
    """docs/deploy.md's table of who calls what: part -> (called by, calls)."""
    table = (REPO / "docs" / "deploy.md").read_text().split("<!-- calls -->")[1]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        part, called_by, calls = (cell.strip() for cell in line.strip("|").split("|"))
        rows[part.strip("`")] = (named_parts(called_by), named_parts(calls))
    return rows


def test_the_documented_calls_are_the_network_policies(rendered: Rendered) -> None:
    """docs/deploy.md and the NetworkPolicies both come from `calls` in the values."""
    policies = {p["metadata"]["name"]: p for p in rendered.of_kind("NetworkPolicy")}
    documented = documented_calls()
    assert set(documented) == {*SERVICES, "memory-sleep"}
    for name, (called_by, calls) in documented.items():
        policy = policies[f"{RELEASE}-{name}"]
        admitted = admitted_components(policy)
        if policy["spec"].get("ingress") and any(
            "namespaceSelector" in peer
            for rule in policy["spec"]["ingress"]
            for peer in rule["from"]
        ):
            admitted.add("the ingress controller")
        assert admitted == called_by, name
        reached = {
            component
            for rule in policy["spec"]["egress"]
            for peer in rule.get("to", [])
            for expression in peer.get("podSelector", {}).get("matchExpressions", [])
            for component in expression["values"]
        } & set(documented)
        assert reached == calls, name


def test_the_worker_runs_code_in_the_unprivileged_sandbox_within_a_bounded_tmp(
    rendered: Rendered,
) -> None:
    pod = rendered.deployment("worker")["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert env_of(container)["VIOLET_SANDBOX_BACKEND"]["value"] == "wasm"
    [tmp] = [volume for volume in pod["volumes"] if volume["name"] == "tmp"]
    assert tmp["emptyDir"]["sizeLimit"] == "1Gi"
    # What the sandbox asks of the pod is nothing the locked-down defaults withhold.
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


def test_every_call_the_code_makes_is_let_through() -> None:
    """What each service's code calls is what `calls` in the values admits, no more: the
    router's and memory's model clients ask the session who pays and send it their usage."""
    from gateway.app import REACHED
    from session.__main__ import PEERS as SESSION_PEERS
    from violet.accounts_client import REMOTE_MODEL_PEERS
    from worker.__main__ import PEERS as WORKER_PEERS

    made = {
        "gateway": set(REACHED),
        "session": set(SESSION_PEERS),
        "router": set(REMOTE_MODEL_PEERS),
        "memory": set(REMOTE_MODEL_PEERS),
        "worker": set(WORKER_PEERS) | set(REMOTE_MODEL_PEERS),
    }
    documented = documented_calls()
    for name, calls in made.items():
        assert documented[name][1] == calls, name
