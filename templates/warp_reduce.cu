    wg_acc v = valid ? wg_load(in[i]) : wg_identity();
${exchange}${store}