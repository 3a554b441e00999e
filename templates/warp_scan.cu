    wg_acc v = valid ? wg_load(in[i]) : wg_identity();
${exchange}    if (valid) out[i] = wg_store(v);
