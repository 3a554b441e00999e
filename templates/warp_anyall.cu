    const bool p = valid ? wg_load(in[i]) != (wg_acc)0 : ${past_end};
    const int r = ${vote}(gmask, p);
    if (glane == 0 && valid) out[i / WG_WIDTH] = r;
