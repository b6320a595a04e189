/* vox's own Vulkan declarations (core/src/vulkan/vk_decl.h, used when building without the SDK) have
 * the official layout: every struct size and field offset equals vulkan_core.h's. Exit 77 (skipped)
 * where the official header is not installed. */
#include <stdio.h>

#if defined(__has_include)
#if __has_include(<vulkan/vulkan_core.h>)
#define HAVE_VULKAN_HEADER 1
#endif
#endif

#ifdef HAVE_VULKAN_HEADER
#include <stddef.h>
#include <string.h>
#include <vulkan/vulkan_core.h>

#include "check.h"
#include "vk_layout_list.h"

extern const size_t vox_vk_layout_ours[], vox_vk_layout_ours_coopmat[];

#define S(s) sizeof(s),
#define F(s, f) offsetof(s, f),
static const size_t official[] = {VK_LAYOUT_LIST(S, F) 0};
#undef S
#undef F
#define S(s) #s,
#define F(s, f) #s "." #f,
static const char *names[] = {VK_LAYOUT_LIST(S, F) NULL};
#undef S
#undef F
#ifdef VK_KHR_cooperative_matrix
#define S(s) sizeof(s),
#define F(s, f) offsetof(s, f),
static const size_t official_cm[] = {VK_LAYOUT_LIST_COOPMAT(S, F) 0};
#undef S
#undef F
#define S(s) #s,
#define F(s, f) #s "." #f,
static const char *names_cm[] = {VK_LAYOUT_LIST_COOPMAT(S, F) NULL};
#endif

int main(void) {
    int n = 0;
    for (; names[n]; n++)
        CHECK(vox_vk_layout_ours[n] == official[n], "%s: vox %zu, vulkan_core.h %zu", names[n], vox_vk_layout_ours[n],
              official[n]);
#ifdef VK_KHR_cooperative_matrix
    for (int i = 0; names_cm[i]; i++, n++)
        CHECK(vox_vk_layout_ours_coopmat[i] == official_cm[i], "%s: vox %zu, vulkan_core.h %zu", names_cm[i],
              vox_vk_layout_ours_coopmat[i], official_cm[i]);
    CHECK(VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR == 1000506001, "cooperative matrix sType");
    CHECK(VK_COMPONENT_TYPE_FLOAT16_KHR == 0 && VK_COMPONENT_TYPE_FLOAT32_KHR == 1 && VK_SCOPE_SUBGROUP_KHR == 3,
          "cooperative matrix enums");
#else
    printf("VK_KHR_cooperative_matrix: the installed header predates it (its declarations not compared)\n");
#endif
    CHECK(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 == 1000059000 &&
              VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES == 1000082000 &&
              VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES == 1000211000,
          "feature sTypes");
    /* a few constants the backend relies on */
    CHECK(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT == 1000237000, "budget sType");
    CHECK(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES == 1000094000, "subgroup sType");
    printf("%d sizes and offsets compared: %s\n", n, fails ? "FAILED" : "ok");
    return fails != 0;
}
#else
const size_t *vox_vk_layout_unused;
int main(void) {
    printf("skipped: the official Vulkan header is not installed\n");
    return 77;
}
#endif
