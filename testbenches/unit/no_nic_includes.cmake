# tlm/ (the host side: PCIe link, host memory, their TLM-2.0 modules) sits below the NIC: none of
# its files includes models/nic/ (the DMA port interface both use is models/common/dma_port.h),
# so the NIC and the host side do not tie each other both ways. Run with -DDIR=<tlm folder>.
file(GLOB files ${DIR}/*.h ${DIR}/*.cpp)
foreach(f ${files})
  file(STRINGS ${f} hits REGEX "#include \"models/nic/")
  if(hits)
    message(FATAL_ERROR "${f} includes the NIC model: ${hits}")
  endif()
endforeach()
