// The C ABI between generated native code and the runtime.
//
// A host kernel's native payload is a shared object that exports exactly the
// three functions below. Block function `i` of the payload is the one the
// Execute Graph's BlockFunction with index `i` names. The runtime calls a block
// once per task with:
//   buffers: one pointer per ExecuteGraph buffer (parameters in order, then
//            workspaces), each to densely packed row-major elements;
//   args:    the task's int64 arguments (tile offsets in elements, one per dim
//            of the op's iteration space, outermost first), then, for kernels
//            with symbolic dims, the bound symbol values (a later format).
//
// This header is plain C so that any target's generated code can include it.
#ifndef PTO_RUNTIME_KERNEL_ABI_H_
#define PTO_RUNTIME_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Bumped when this ABI or the KernelBinary layout changes incompatibly. It is
// also KernelBinary.format_version.
#define PTO_KERNEL_FORMAT_VERSION 1

// "PTO1": KernelBinary.magic.
#define PTO_KERNEL_MAGIC 0x4F545031u

typedef void (*pto_block_fn)(void* const* buffers, const int64_t* args);

// Symbols the payload exports (declared for the loader's dlsym).
#define PTO_SYM_ABI_VERSION "pto_abi_version"
#define PTO_SYM_NUM_BLOCKS "pto_num_blocks"
#define PTO_SYM_BLOCK "pto_block"

typedef int (*pto_abi_version_fn)(void);
typedef int (*pto_num_blocks_fn)(void);
typedef pto_block_fn (*pto_block_lookup_fn)(int index);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // PTO_RUNTIME_KERNEL_ABI_H_
