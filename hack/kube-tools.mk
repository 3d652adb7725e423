# The Makefile includes hack/*.mk; the kube-tools rules live beside what they build.
include $(dir $(lastword $(MAKEFILE_LIST)))kube-tools/kube.mk
