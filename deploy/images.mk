# `make images` builds one container image per service, each from services/NAME/Dockerfile with the
# repository root as build context, tagged violet-NAME:$(VERSION). Included by the Makefile.

VIOLET_SERVICES := gateway session router memory worker
VERSION ?= $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
DOCKER ?= docker

.PHONY: images $(addprefix image-,$(VIOLET_SERVICES))

images: $(addprefix image-,$(VIOLET_SERVICES))

$(addprefix image-,$(VIOLET_SERVICES)): image-%: requirements.lock
	$(DOCKER) build -f services/$*/Dockerfile -t violet-$*:$(VERSION) .
