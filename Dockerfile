# syntax=docker/dockerfile:1
# Build a static binary, ship it on distroless/static. No USER: Docker
# actions run as root so the runner's mounted workspace and files stay writable.
FROM golang:1.26 AS build
# The golang image sets GOTOOLCHAIN=local; auto lets go.mod's toolchain line
# (the patched standard library) win over an older Go in the image.
ENV GOTOOLCHAIN=auto
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/bot ./cmd/bot

FROM gcr.io/distroless/static-debian12
COPY --from=build /out/bot /bot
ENTRYPOINT ["/bot"]
CMD ["action"]
