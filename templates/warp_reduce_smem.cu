    wg_acc v = valid ? WG_MAP(in[i], i) : wg_identity();
    wg_acc *s = (wg_acc *)wg_smem + threadIdx.x;
    /* A tree through shared memory: the baseline the shuffles are measured
     * against. The second barrier keeps the next step's store from racing
     * with this step's loads. */
#pragma unroll
    for (unsigned offset = WG_WIDTH / 2; offset > 0; offset /= 2) {
      s[0] = v;
      __syncwarp(gmask);
      if (glane < offset) v = wg_combine(v, s[offset]);
      __syncwarp(gmask);
    }
${finish}${store}