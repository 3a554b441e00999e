    wg_acc v = valid ? WG_MAP(in[i], i) : wg_identity();
    wg_acc *s = (wg_acc *)wg_smem + threadIdx.x;
#pragma unroll
    for (unsigned offset = 1; offset < WG_WIDTH; offset *= 2) {
      s[0] = v;
      __syncwarp(gmask);
      if (glane >= offset) v = wg_combine(s[-(int)offset], v);
      __syncwarp(gmask);
    }
${finish}    if (valid) out[i] = WG_FINAL(v, i);
