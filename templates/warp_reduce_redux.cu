    wg_acc v = valid ? wg_load(in[i]) : wg_identity();
    v = (wg_acc)${redux}(gmask, (${redux_arg})v); /* one redux.sync */
${store}