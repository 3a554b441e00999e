    wg_acc v = valid ? wg_load(in[i]) : wg_identity();
#pragma unroll
    for (unsigned offset = 1; offset < WG_WIDTH; offset *= 2) {
      const wg_acc before = ${shuffle};
      if (glane >= offset) v = wg_combine(before, v);
    }
${finish}    if (valid) out[i] = wg_store(v);
