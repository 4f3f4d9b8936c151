# Kernel verification for every job on a node that runs PTO kernels outside
# Kubernetes: install as /etc/profile.d/pto-verify.sh (and put the same line
# in the environment of schedulers' job units) with the key ptod signs with
# at /etc/pto/verify.key (mode 0640, group of the job users). The runtime then
# refuses any kernel binary whose signature does not verify
# (docs/operations.md, "Verifying kernels in every job").
export PTO_KERNEL_VERIFY_KEY_FILE=/etc/pto/verify.key
