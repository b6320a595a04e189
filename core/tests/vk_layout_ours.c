/* The layout of vox's own Vulkan declarations (vk_decl.h), for test_vulkan_abi.c, which compiles the
 * same list against the official header. */
#include <stddef.h>

#include "vk_layout_list.h"
#include "vulkan/vk_decl.h"

#define S(s) sizeof(s),
#define F(s, f) offsetof(s, f),
const size_t vox_vk_layout_ours[] = {VK_LAYOUT_LIST(S, F) 0};
const size_t vox_vk_layout_ours_coopmat[] = {VK_LAYOUT_LIST_COOPMAT(S, F) 0};
