/* Every struct of core/src/vulkan/vk_decl.h and each of its fields: S(struct) for the size, F(struct, field)
 * for an offset. Used by test_vulkan_abi.c to compare the declarations with the official header. */
#define VK_LAYOUT_LIST(S, F) \
    S(VkApplicationInfo) \
    F(VkApplicationInfo, sType) \
    F(VkApplicationInfo, pNext) \
    F(VkApplicationInfo, pApplicationName) \
    F(VkApplicationInfo, applicationVersion) \
    F(VkApplicationInfo, pEngineName) \
    F(VkApplicationInfo, engineVersion) \
    F(VkApplicationInfo, apiVersion) \
    S(VkInstanceCreateInfo) \
    F(VkInstanceCreateInfo, sType) \
    F(VkInstanceCreateInfo, pNext) \
    F(VkInstanceCreateInfo, flags) \
    F(VkInstanceCreateInfo, pApplicationInfo) \
    F(VkInstanceCreateInfo, enabledLayerCount) \
    F(VkInstanceCreateInfo, ppEnabledLayerNames) \
    F(VkInstanceCreateInfo, enabledExtensionCount) \
    F(VkInstanceCreateInfo, ppEnabledExtensionNames) \
    S(VkExtensionProperties) \
    F(VkExtensionProperties, extensionName) \
    F(VkExtensionProperties, specVersion) \
    S(VkExtent3D) \
    F(VkExtent3D, width) \
    F(VkExtent3D, height) \
    F(VkExtent3D, depth) \
    S(VkQueueFamilyProperties) \
    F(VkQueueFamilyProperties, queueFlags) \
    F(VkQueueFamilyProperties, queueCount) \
    F(VkQueueFamilyProperties, timestampValidBits) \
    F(VkQueueFamilyProperties, minImageTransferGranularity) \
    S(VkMemoryType) \
    F(VkMemoryType, propertyFlags) \
    F(VkMemoryType, heapIndex) \
    S(VkMemoryHeap) \
    F(VkMemoryHeap, size) \
    F(VkMemoryHeap, flags) \
    S(VkPhysicalDeviceMemoryProperties) \
    F(VkPhysicalDeviceMemoryProperties, memoryTypeCount) \
    F(VkPhysicalDeviceMemoryProperties, memoryTypes) \
    F(VkPhysicalDeviceMemoryProperties, memoryHeapCount) \
    F(VkPhysicalDeviceMemoryProperties, memoryHeaps) \
    S(VkPhysicalDeviceMemoryProperties2) \
    F(VkPhysicalDeviceMemoryProperties2, sType) \
    F(VkPhysicalDeviceMemoryProperties2, pNext) \
    F(VkPhysicalDeviceMemoryProperties2, memoryProperties) \
    S(VkPhysicalDeviceMemoryBudgetPropertiesEXT) \
    F(VkPhysicalDeviceMemoryBudgetPropertiesEXT, sType) \
    F(VkPhysicalDeviceMemoryBudgetPropertiesEXT, pNext) \
    F(VkPhysicalDeviceMemoryBudgetPropertiesEXT, heapBudget) \
    F(VkPhysicalDeviceMemoryBudgetPropertiesEXT, heapUsage) \
    S(VkPhysicalDeviceLimits) \
    F(VkPhysicalDeviceLimits, maxImageDimension1D) \
    F(VkPhysicalDeviceLimits, maxImageDimension2D) \
    F(VkPhysicalDeviceLimits, maxImageDimension3D) \
    F(VkPhysicalDeviceLimits, maxImageDimensionCube) \
    F(VkPhysicalDeviceLimits, maxImageArrayLayers) \
    F(VkPhysicalDeviceLimits, maxTexelBufferElements) \
    F(VkPhysicalDeviceLimits, maxUniformBufferRange) \
    F(VkPhysicalDeviceLimits, maxStorageBufferRange) \
    F(VkPhysicalDeviceLimits, maxPushConstantsSize) \
    F(VkPhysicalDeviceLimits, maxMemoryAllocationCount) \
    F(VkPhysicalDeviceLimits, maxSamplerAllocationCount) \
    F(VkPhysicalDeviceLimits, bufferImageGranularity) \
    F(VkPhysicalDeviceLimits, sparseAddressSpaceSize) \
    F(VkPhysicalDeviceLimits, maxBoundDescriptorSets) \
    F(VkPhysicalDeviceLimits, maxPerStageDescriptorSamplers) \
    F(VkPhysicalDeviceLimits, maxPerStageDescriptorUniformBuffers) \
    F(VkPhysicalDeviceLimits, maxPerStageDescriptorStorageBuffers) \
    F(VkPhysicalDeviceLimits, maxPerStageDescriptorSampledImages) \
    F(VkPhysicalDeviceLimits, maxPerStageDescriptorStorageImages) \
    F(VkPhysicalDeviceLimits, maxPerStageDescriptorInputAttachments) \
    F(VkPhysicalDeviceLimits, maxPerStageResources) \
    F(VkPhysicalDeviceLimits, maxDescriptorSetSamplers) \
    F(VkPhysicalDeviceLimits, maxDescriptorSetUniformBuffers) \
    F(VkPhysicalDeviceLimits, maxDescriptorSetUniformBuffersDynamic) \
    F(VkPhysicalDeviceLimits, maxDescriptorSetStorageBuffers) \
    F(VkPhysicalDeviceLimits, maxDescriptorSetStorageBuffersDynamic) \
    F(VkPhysicalDeviceLimits, maxDescriptorSetSampledImages) \
    F(VkPhysicalDeviceLimits, maxDescriptorSetStorageImages) \
    F(VkPhysicalDeviceLimits, maxDescriptorSetInputAttachments) \
    F(VkPhysicalDeviceLimits, maxVertexInputAttributes) \
    F(VkPhysicalDeviceLimits, maxVertexInputBindings) \
    F(VkPhysicalDeviceLimits, maxVertexInputAttributeOffset) \
    F(VkPhysicalDeviceLimits, maxVertexInputBindingStride) \
    F(VkPhysicalDeviceLimits, maxVertexOutputComponents) \
    F(VkPhysicalDeviceLimits, maxTessellationGenerationLevel) \
    F(VkPhysicalDeviceLimits, maxTessellationPatchSize) \
    F(VkPhysicalDeviceLimits, maxTessellationControlPerVertexInputComponents) \
    F(VkPhysicalDeviceLimits, maxTessellationControlPerVertexOutputComponents) \
    F(VkPhysicalDeviceLimits, maxTessellationControlPerPatchOutputComponents) \
    F(VkPhysicalDeviceLimits, maxTessellationControlTotalOutputComponents) \
    F(VkPhysicalDeviceLimits, maxTessellationEvaluationInputComponents) \
    F(VkPhysicalDeviceLimits, maxTessellationEvaluationOutputComponents) \
    F(VkPhysicalDeviceLimits, maxGeometryShaderInvocations) \
    F(VkPhysicalDeviceLimits, maxGeometryInputComponents) \
    F(VkPhysicalDeviceLimits, maxGeometryOutputComponents) \
    F(VkPhysicalDeviceLimits, maxGeometryOutputVertices) \
    F(VkPhysicalDeviceLimits, maxGeometryTotalOutputComponents) \
    F(VkPhysicalDeviceLimits, maxFragmentInputComponents) \
    F(VkPhysicalDeviceLimits, maxFragmentOutputAttachments) \
    F(VkPhysicalDeviceLimits, maxFragmentDualSrcAttachments) \
    F(VkPhysicalDeviceLimits, maxFragmentCombinedOutputResources) \
    F(VkPhysicalDeviceLimits, maxComputeSharedMemorySize) \
    F(VkPhysicalDeviceLimits, maxComputeWorkGroupCount) \
    F(VkPhysicalDeviceLimits, maxComputeWorkGroupInvocations) \
    F(VkPhysicalDeviceLimits, maxComputeWorkGroupSize) \
    F(VkPhysicalDeviceLimits, subPixelPrecisionBits) \
    F(VkPhysicalDeviceLimits, subTexelPrecisionBits) \
    F(VkPhysicalDeviceLimits, mipmapPrecisionBits) \
    F(VkPhysicalDeviceLimits, maxDrawIndexedIndexValue) \
    F(VkPhysicalDeviceLimits, maxDrawIndirectCount) \
    F(VkPhysicalDeviceLimits, maxSamplerLodBias) \
    F(VkPhysicalDeviceLimits, maxSamplerAnisotropy) \
    F(VkPhysicalDeviceLimits, maxViewports) \
    F(VkPhysicalDeviceLimits, maxViewportDimensions) \
    F(VkPhysicalDeviceLimits, viewportBoundsRange) \
    F(VkPhysicalDeviceLimits, viewportSubPixelBits) \
    F(VkPhysicalDeviceLimits, minMemoryMapAlignment) \
    F(VkPhysicalDeviceLimits, minTexelBufferOffsetAlignment) \
    F(VkPhysicalDeviceLimits, minUniformBufferOffsetAlignment) \
    F(VkPhysicalDeviceLimits, minStorageBufferOffsetAlignment) \
    F(VkPhysicalDeviceLimits, minTexelOffset) \
    F(VkPhysicalDeviceLimits, maxTexelOffset) \
    F(VkPhysicalDeviceLimits, minTexelGatherOffset) \
    F(VkPhysicalDeviceLimits, maxTexelGatherOffset) \
    F(VkPhysicalDeviceLimits, minInterpolationOffset) \
    F(VkPhysicalDeviceLimits, maxInterpolationOffset) \
    F(VkPhysicalDeviceLimits, subPixelInterpolationOffsetBits) \
    F(VkPhysicalDeviceLimits, maxFramebufferWidth) \
    F(VkPhysicalDeviceLimits, maxFramebufferHeight) \
    F(VkPhysicalDeviceLimits, maxFramebufferLayers) \
    F(VkPhysicalDeviceLimits, framebufferColorSampleCounts) \
    F(VkPhysicalDeviceLimits, framebufferDepthSampleCounts) \
    F(VkPhysicalDeviceLimits, framebufferStencilSampleCounts) \
    F(VkPhysicalDeviceLimits, framebufferNoAttachmentsSampleCounts) \
    F(VkPhysicalDeviceLimits, maxColorAttachments) \
    F(VkPhysicalDeviceLimits, sampledImageColorSampleCounts) \
    F(VkPhysicalDeviceLimits, sampledImageIntegerSampleCounts) \
    F(VkPhysicalDeviceLimits, sampledImageDepthSampleCounts) \
    F(VkPhysicalDeviceLimits, sampledImageStencilSampleCounts) \
    F(VkPhysicalDeviceLimits, storageImageSampleCounts) \
    F(VkPhysicalDeviceLimits, maxSampleMaskWords) \
    F(VkPhysicalDeviceLimits, timestampComputeAndGraphics) \
    F(VkPhysicalDeviceLimits, timestampPeriod) \
    F(VkPhysicalDeviceLimits, maxClipDistances) \
    F(VkPhysicalDeviceLimits, maxCullDistances) \
    F(VkPhysicalDeviceLimits, maxCombinedClipAndCullDistances) \
    F(VkPhysicalDeviceLimits, discreteQueuePriorities) \
    F(VkPhysicalDeviceLimits, pointSizeRange) \
    F(VkPhysicalDeviceLimits, lineWidthRange) \
    F(VkPhysicalDeviceLimits, pointSizeGranularity) \
    F(VkPhysicalDeviceLimits, lineWidthGranularity) \
    F(VkPhysicalDeviceLimits, strictLines) \
    F(VkPhysicalDeviceLimits, standardSampleLocations) \
    F(VkPhysicalDeviceLimits, optimalBufferCopyOffsetAlignment) \
    F(VkPhysicalDeviceLimits, optimalBufferCopyRowPitchAlignment) \
    F(VkPhysicalDeviceLimits, nonCoherentAtomSize) \
    S(VkPhysicalDeviceSparseProperties) \
    F(VkPhysicalDeviceSparseProperties, residencyStandard2DBlockShape) \
    F(VkPhysicalDeviceSparseProperties, residencyStandard2DMultisampleBlockShape) \
    F(VkPhysicalDeviceSparseProperties, residencyStandard3DBlockShape) \
    F(VkPhysicalDeviceSparseProperties, residencyAlignedMipSize) \
    F(VkPhysicalDeviceSparseProperties, residencyNonResidentStrict) \
    S(VkPhysicalDeviceProperties) \
    F(VkPhysicalDeviceProperties, apiVersion) \
    F(VkPhysicalDeviceProperties, driverVersion) \
    F(VkPhysicalDeviceProperties, vendorID) \
    F(VkPhysicalDeviceProperties, deviceID) \
    F(VkPhysicalDeviceProperties, deviceType) \
    F(VkPhysicalDeviceProperties, deviceName) \
    F(VkPhysicalDeviceProperties, pipelineCacheUUID) \
    F(VkPhysicalDeviceProperties, limits) \
    F(VkPhysicalDeviceProperties, sparseProperties) \
    S(VkPhysicalDeviceProperties2) \
    F(VkPhysicalDeviceProperties2, sType) \
    F(VkPhysicalDeviceProperties2, pNext) \
    F(VkPhysicalDeviceProperties2, properties) \
    S(VkPhysicalDeviceSubgroupProperties) \
    F(VkPhysicalDeviceSubgroupProperties, sType) \
    F(VkPhysicalDeviceSubgroupProperties, pNext) \
    F(VkPhysicalDeviceSubgroupProperties, subgroupSize) \
    F(VkPhysicalDeviceSubgroupProperties, supportedStages) \
    F(VkPhysicalDeviceSubgroupProperties, supportedOperations) \
    F(VkPhysicalDeviceSubgroupProperties, quadOperationsInAllStages) \
    S(VkDeviceQueueCreateInfo) \
    F(VkDeviceQueueCreateInfo, sType) \
    F(VkDeviceQueueCreateInfo, pNext) \
    F(VkDeviceQueueCreateInfo, flags) \
    F(VkDeviceQueueCreateInfo, queueFamilyIndex) \
    F(VkDeviceQueueCreateInfo, queueCount) \
    F(VkDeviceQueueCreateInfo, pQueuePriorities) \
    S(VkDeviceCreateInfo) \
    F(VkDeviceCreateInfo, sType) \
    F(VkDeviceCreateInfo, pNext) \
    F(VkDeviceCreateInfo, flags) \
    F(VkDeviceCreateInfo, queueCreateInfoCount) \
    F(VkDeviceCreateInfo, pQueueCreateInfos) \
    F(VkDeviceCreateInfo, enabledLayerCount) \
    F(VkDeviceCreateInfo, ppEnabledLayerNames) \
    F(VkDeviceCreateInfo, enabledExtensionCount) \
    F(VkDeviceCreateInfo, ppEnabledExtensionNames) \
    F(VkDeviceCreateInfo, pEnabledFeatures) \
    S(VkBufferCreateInfo) \
    F(VkBufferCreateInfo, sType) \
    F(VkBufferCreateInfo, pNext) \
    F(VkBufferCreateInfo, flags) \
    F(VkBufferCreateInfo, size) \
    F(VkBufferCreateInfo, usage) \
    F(VkBufferCreateInfo, sharingMode) \
    F(VkBufferCreateInfo, queueFamilyIndexCount) \
    F(VkBufferCreateInfo, pQueueFamilyIndices) \
    S(VkMemoryRequirements) \
    F(VkMemoryRequirements, size) \
    F(VkMemoryRequirements, alignment) \
    F(VkMemoryRequirements, memoryTypeBits) \
    S(VkMemoryAllocateInfo) \
    F(VkMemoryAllocateInfo, sType) \
    F(VkMemoryAllocateInfo, pNext) \
    F(VkMemoryAllocateInfo, allocationSize) \
    F(VkMemoryAllocateInfo, memoryTypeIndex) \
    S(VkShaderModuleCreateInfo) \
    F(VkShaderModuleCreateInfo, sType) \
    F(VkShaderModuleCreateInfo, pNext) \
    F(VkShaderModuleCreateInfo, flags) \
    F(VkShaderModuleCreateInfo, codeSize) \
    F(VkShaderModuleCreateInfo, pCode) \
    S(VkDescriptorSetLayoutBinding) \
    F(VkDescriptorSetLayoutBinding, binding) \
    F(VkDescriptorSetLayoutBinding, descriptorType) \
    F(VkDescriptorSetLayoutBinding, descriptorCount) \
    F(VkDescriptorSetLayoutBinding, stageFlags) \
    F(VkDescriptorSetLayoutBinding, pImmutableSamplers) \
    S(VkDescriptorSetLayoutCreateInfo) \
    F(VkDescriptorSetLayoutCreateInfo, sType) \
    F(VkDescriptorSetLayoutCreateInfo, pNext) \
    F(VkDescriptorSetLayoutCreateInfo, flags) \
    F(VkDescriptorSetLayoutCreateInfo, bindingCount) \
    F(VkDescriptorSetLayoutCreateInfo, pBindings) \
    S(VkPushConstantRange) \
    F(VkPushConstantRange, stageFlags) \
    F(VkPushConstantRange, offset) \
    F(VkPushConstantRange, size) \
    S(VkPipelineLayoutCreateInfo) \
    F(VkPipelineLayoutCreateInfo, sType) \
    F(VkPipelineLayoutCreateInfo, pNext) \
    F(VkPipelineLayoutCreateInfo, flags) \
    F(VkPipelineLayoutCreateInfo, setLayoutCount) \
    F(VkPipelineLayoutCreateInfo, pSetLayouts) \
    F(VkPipelineLayoutCreateInfo, pushConstantRangeCount) \
    F(VkPipelineLayoutCreateInfo, pPushConstantRanges) \
    S(VkSpecializationMapEntry) \
    F(VkSpecializationMapEntry, constantID) \
    F(VkSpecializationMapEntry, offset) \
    F(VkSpecializationMapEntry, size) \
    S(VkSpecializationInfo) \
    F(VkSpecializationInfo, mapEntryCount) \
    F(VkSpecializationInfo, pMapEntries) \
    F(VkSpecializationInfo, dataSize) \
    F(VkSpecializationInfo, pData) \
    S(VkPipelineShaderStageCreateInfo) \
    F(VkPipelineShaderStageCreateInfo, sType) \
    F(VkPipelineShaderStageCreateInfo, pNext) \
    F(VkPipelineShaderStageCreateInfo, flags) \
    F(VkPipelineShaderStageCreateInfo, stage) \
    F(VkPipelineShaderStageCreateInfo, module) \
    F(VkPipelineShaderStageCreateInfo, pName) \
    F(VkPipelineShaderStageCreateInfo, pSpecializationInfo) \
    S(VkComputePipelineCreateInfo) \
    F(VkComputePipelineCreateInfo, sType) \
    F(VkComputePipelineCreateInfo, pNext) \
    F(VkComputePipelineCreateInfo, flags) \
    F(VkComputePipelineCreateInfo, stage) \
    F(VkComputePipelineCreateInfo, layout) \
    F(VkComputePipelineCreateInfo, basePipelineHandle) \
    F(VkComputePipelineCreateInfo, basePipelineIndex) \
    S(VkPipelineCacheCreateInfo) \
    F(VkPipelineCacheCreateInfo, sType) \
    F(VkPipelineCacheCreateInfo, pNext) \
    F(VkPipelineCacheCreateInfo, flags) \
    F(VkPipelineCacheCreateInfo, initialDataSize) \
    F(VkPipelineCacheCreateInfo, pInitialData) \
    S(VkDescriptorPoolSize) \
    F(VkDescriptorPoolSize, type) \
    F(VkDescriptorPoolSize, descriptorCount) \
    S(VkDescriptorPoolCreateInfo) \
    F(VkDescriptorPoolCreateInfo, sType) \
    F(VkDescriptorPoolCreateInfo, pNext) \
    F(VkDescriptorPoolCreateInfo, flags) \
    F(VkDescriptorPoolCreateInfo, maxSets) \
    F(VkDescriptorPoolCreateInfo, poolSizeCount) \
    F(VkDescriptorPoolCreateInfo, pPoolSizes) \
    S(VkDescriptorSetAllocateInfo) \
    F(VkDescriptorSetAllocateInfo, sType) \
    F(VkDescriptorSetAllocateInfo, pNext) \
    F(VkDescriptorSetAllocateInfo, descriptorPool) \
    F(VkDescriptorSetAllocateInfo, descriptorSetCount) \
    F(VkDescriptorSetAllocateInfo, pSetLayouts) \
    S(VkDescriptorBufferInfo) \
    F(VkDescriptorBufferInfo, buffer) \
    F(VkDescriptorBufferInfo, offset) \
    F(VkDescriptorBufferInfo, range) \
    S(VkWriteDescriptorSet) \
    F(VkWriteDescriptorSet, sType) \
    F(VkWriteDescriptorSet, pNext) \
    F(VkWriteDescriptorSet, dstSet) \
    F(VkWriteDescriptorSet, dstBinding) \
    F(VkWriteDescriptorSet, dstArrayElement) \
    F(VkWriteDescriptorSet, descriptorCount) \
    F(VkWriteDescriptorSet, descriptorType) \
    F(VkWriteDescriptorSet, pImageInfo) \
    F(VkWriteDescriptorSet, pBufferInfo) \
    F(VkWriteDescriptorSet, pTexelBufferView) \
    S(VkCommandPoolCreateInfo) \
    F(VkCommandPoolCreateInfo, sType) \
    F(VkCommandPoolCreateInfo, pNext) \
    F(VkCommandPoolCreateInfo, flags) \
    F(VkCommandPoolCreateInfo, queueFamilyIndex) \
    S(VkCommandBufferAllocateInfo) \
    F(VkCommandBufferAllocateInfo, sType) \
    F(VkCommandBufferAllocateInfo, pNext) \
    F(VkCommandBufferAllocateInfo, commandPool) \
    F(VkCommandBufferAllocateInfo, level) \
    F(VkCommandBufferAllocateInfo, commandBufferCount) \
    S(VkCommandBufferBeginInfo) \
    F(VkCommandBufferBeginInfo, sType) \
    F(VkCommandBufferBeginInfo, pNext) \
    F(VkCommandBufferBeginInfo, flags) \
    F(VkCommandBufferBeginInfo, pInheritanceInfo) \
    S(VkMemoryBarrier) \
    F(VkMemoryBarrier, sType) \
    F(VkMemoryBarrier, pNext) \
    F(VkMemoryBarrier, srcAccessMask) \
    F(VkMemoryBarrier, dstAccessMask) \
    S(VkBufferCopy) \
    F(VkBufferCopy, srcOffset) \
    F(VkBufferCopy, dstOffset) \
    F(VkBufferCopy, size) \
    S(VkSubmitInfo) \
    F(VkSubmitInfo, sType) \
    F(VkSubmitInfo, pNext) \
    F(VkSubmitInfo, waitSemaphoreCount) \
    F(VkSubmitInfo, pWaitSemaphores) \
    F(VkSubmitInfo, pWaitDstStageMask) \
    F(VkSubmitInfo, commandBufferCount) \
    F(VkSubmitInfo, pCommandBuffers) \
    F(VkSubmitInfo, signalSemaphoreCount) \
    F(VkSubmitInfo, pSignalSemaphores) \
    S(VkFenceCreateInfo) \
    F(VkFenceCreateInfo, sType) \
    F(VkFenceCreateInfo, pNext) \
    F(VkFenceCreateInfo, flags) \
    S(VkQueryPoolCreateInfo) \
    F(VkQueryPoolCreateInfo, sType) \
    F(VkQueryPoolCreateInfo, pNext) \
    F(VkQueryPoolCreateInfo, flags) \
    F(VkQueryPoolCreateInfo, queryType) \
    F(VkQueryPoolCreateInfo, queryCount) \
    F(VkQueryPoolCreateInfo, pipelineStatistics) \
    S(VkPhysicalDeviceFeatures2) \
    F(VkPhysicalDeviceFeatures2, pNext) \
    F(VkPhysicalDeviceFeatures2, features) \
    S(VkPhysicalDeviceShaderFloat16Int8Features) \
    F(VkPhysicalDeviceShaderFloat16Int8Features, pNext) \
    F(VkPhysicalDeviceShaderFloat16Int8Features, shaderFloat16) \
    F(VkPhysicalDeviceShaderFloat16Int8Features, shaderInt8) \
    S(VkPhysicalDeviceVulkanMemoryModelFeatures) \
    F(VkPhysicalDeviceVulkanMemoryModelFeatures, pNext) \
    F(VkPhysicalDeviceVulkanMemoryModelFeatures, vulkanMemoryModel) \
    F(VkPhysicalDeviceVulkanMemoryModelFeatures, vulkanMemoryModelDeviceScope) \
    F(VkPhysicalDeviceVulkanMemoryModelFeatures, vulkanMemoryModelAvailabilityVisibilityChains) \

/* VK_KHR_cooperative_matrix (vulkan_core.h 1.3.255 and later) */
#define VK_LAYOUT_LIST_COOPMAT(S, F) \
    S(VkPhysicalDeviceCooperativeMatrixFeaturesKHR) \
    F(VkPhysicalDeviceCooperativeMatrixFeaturesKHR, pNext) \
    F(VkPhysicalDeviceCooperativeMatrixFeaturesKHR, cooperativeMatrix) \
    F(VkPhysicalDeviceCooperativeMatrixFeaturesKHR, cooperativeMatrixRobustBufferAccess) \
    S(VkCooperativeMatrixPropertiesKHR) \
    F(VkCooperativeMatrixPropertiesKHR, pNext) \
    F(VkCooperativeMatrixPropertiesKHR, MSize) \
    F(VkCooperativeMatrixPropertiesKHR, NSize) \
    F(VkCooperativeMatrixPropertiesKHR, KSize) \
    F(VkCooperativeMatrixPropertiesKHR, AType) \
    F(VkCooperativeMatrixPropertiesKHR, BType) \
    F(VkCooperativeMatrixPropertiesKHR, CType) \
    F(VkCooperativeMatrixPropertiesKHR, ResultType) \
    F(VkCooperativeMatrixPropertiesKHR, saturatingAccumulation) \
    F(VkCooperativeMatrixPropertiesKHR, scope) \

