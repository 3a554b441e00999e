    wg_acc v = valid ? wg_load(in[i]) : wg_identity();
#pragma unroll
    for (unsigned offset = WG_WIDTH / 2; offset > 0; offset /= 2)
      v = wg_combine(v, ${shuffle});
${finish}${store}