"""Protocol buffer and gRPC code generation with the system protoc.

Bazel's native proto_library would fetch @com_google_protobuf; this macro runs
/usr/bin/protoc and grpc_cpp_plugin from Debian instead.
"""

def pto_proto_library(name, srcs, deps = [], grpc = False, python = True):
    """Generates C++ (and optionally gRPC and Python) code for `srcs`.

    Makes `name` (a cc_library) and, when python is set, `name + "_py"` (a
    filegroup of the generated *_pb2.py files). Import paths are relative to
    the workspace's proto/ directory, e.g. "pto/v1/graph.proto".
    """
    rel = [s for s in srcs]
    base = [s[:-len(".proto")] for s in rel]
    cc_outs = [b + ".pb.cc" for b in base] + [b + ".pb.h" for b in base]
    if grpc:
        cc_outs += [b + ".grpc.pb.cc" for b in base] + [b + ".grpc.pb.h" for b in base]
    dep_srcs = []
    for d in deps:
        dep_srcs.append(d + "_srcs")
    native.filegroup(
        name = name + "_srcs",
        srcs = srcs + dep_srcs,
    )
    grpc_flags = ""
    if grpc:
        grpc_flags = "--grpc_out=$(RULEDIR) --plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin "
    native.genrule(
        name = name + "_cc_gen",
        srcs = srcs + dep_srcs,
        outs = cc_outs,
        cmd = "/usr/bin/protoc -I" + native.package_name() +
              " --cpp_out=$(RULEDIR) " + grpc_flags +
              " ".join(["$(location " + s + ")" for s in rel]),
    )
    native.cc_library(
        name = name,
        srcs = [o for o in cc_outs if o.endswith(".cc")],
        hdrs = [o for o in cc_outs if o.endswith(".h")],
        includes = ["."],
        deps = deps + ["@system//:grpc" if grpc else "@system//:protobuf"],
        visibility = ["//visibility:public"],
    )
    if python:
        py_outs = [b.replace("-", "_") + "_pb2.py" for b in base]
        native.genrule(
            name = name + "_py_gen",
            srcs = srcs + dep_srcs,
            outs = py_outs,
            cmd = "/usr/bin/protoc -I" + native.package_name() +
                  " --python_out=$(RULEDIR) " +
                  " ".join(["$(location " + s + ")" for s in rel]),
        )
        native.filegroup(
            name = name + "_py",
            srcs = py_outs,
            visibility = ["//visibility:public"],
        )
