# The manager image for docker and podman users. `cargo xtask docker-build` builds the
# static manager binary, writes the image as an OCI archive without any daemon, and also
# writes its files into target/image/rootfs, which this file packs into the same image:
#
#   cargo xtask docker-build --image <image>
#   docker build -t <image> .          # or: podman build -t <image> .
#
# No base image: the manager is a static executable and the files it needs (CA
# certificates, the nonroot user) are in target/image/rootfs.
FROM scratch
COPY target/image/rootfs/ /
USER 65532:65532
ENTRYPOINT ["/manager"]
