    wg_acc v = valid ? WG_MAP(in[i], i) : wg_identity();
${exchange}    if (valid) out[i] = WG_FINAL(v, i);
