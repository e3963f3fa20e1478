#!/usr/bin/python3
"""Generates the loader's corpus of broken (and edge-case valid) Keras .h5 files.

Run with Debian's Python (h5py + numpy):  /usr/bin/python3 tests/data/broken/make_broken.py
Outputs, next to this script:
  *.h5, not_hdf5.h5      files load_keras_h5 must reject with nnd::Error
  expected.json          {"file": "substring the error message must contain", ...}
  valid/*.h5             edge cases that must load (string encodings, Sequential variants,
                         shared layers, TFOpLambda, Keras 3 merge nesting, chunked attributes)
  valid/valid.json       {"file": {"inputs": [...], "outputs": [...]}}
The files are written the way Keras itself writes them (Keras uses h5py), see tools/fixtures/write_h5.py.
Deterministic: fixed seeds, so re-running reproduces the committed files.
"""
import json
import os

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VALID = os.path.join(HERE, 'valid')
ASCII = h5py.string_dtype('ascii')
rng = np.random.default_rng(1234)


def str_array(names, fixed):
    if fixed:
        n = max(len(s) for s in names)
        return np.array([s.encode('utf8') for s in names], dtype='S%d' % n)
    return np.array([s.encode('ascii') for s in names], dtype=ASCII)


def write_model(path, config, weights, keras_version='2.6.0', fixed=False, fixed_root=False,
                chunk_weight_names=False, config_text=None, skip_datasets=(), dtype='<f4'):
    """weights: {layer_name: [(weight_name, array), ...]} for every layer (empty list: no weights)."""
    layer_names = [n for n in weights]
    with h5py.File(path, 'w') as f:
        text = config_text if config_text is not None else json.dumps(config)
        for k, v in (('backend', 'tensorflow'), ('keras_version', keras_version), ('model_config', text)):
            if v is None:
                continue
            if fixed_root:
                f.attrs.create(k, np.bytes_(v.encode('utf8')))
            else:
                f.attrs[k] = v
        mw = f.create_group('model_weights')
        mw.attrs.create('backend', 'tensorflow', dtype=ASCII)
        mw.attrs.create('keras_version', keras_version, dtype=ASCII)
        mw.attrs.create('layer_names', str_array(layer_names, fixed))
        for layer, ws in weights.items():
            grp = mw.create_group(layer)
            names = [n for n, _ in ws]
            if not names:
                grp.attrs.create('weight_names', np.zeros((0,), dtype='<f8'))
            elif chunk_weight_names and len(names) > 1:
                # Keras splits attributes above the object header limit into name0, name1, ...
                half = len(names) // 2
                grp.attrs.create('weight_names0', str_array(names[:half], fixed))
                grp.attrs.create('weight_names1', str_array(names[half:], fixed))
            else:
                grp.attrs.create('weight_names', str_array(names, fixed))
            for n, arr in ws:
                if n in skip_datasets:
                    continue
                grp.create_dataset(n, data=np.asarray(arr).astype(dtype))


def w(*shape):
    return rng.standard_normal(shape).astype('<f4')


# ---------------------------------------------------------------- Keras 2 JSON building blocks
def k2_input(name, shape):
    return {'class_name': 'InputLayer', 'name': name, 'inbound_nodes': [],
            'config': {'batch_input_shape': [None] + list(shape), 'dtype': 'float32',
                       'sparse': False, 'ragged': False, 'name': name}}


def k2_layer(cls, name, inputs, **cfg):
    """inputs: list of layer names (node 0, tensor 0) or (name, node) pairs."""
    refs = []
    for i in inputs:
        n, k = (i, 0) if isinstance(i, str) else i
        refs.append([n, k, 0, {}])
    c = {'name': name, 'trainable': True, 'dtype': 'float32'}
    c.update(cfg)
    return {'class_name': cls, 'config': c, 'name': name, 'inbound_nodes': [refs]}


def k2_functional(layers, inputs, outputs):
    return {'class_name': 'Functional',
            'config': {'name': 'model', 'layers': layers,
                       'input_layers': [[n, 0, 0] for n in inputs],
                       'output_layers': [[n, 0, 0] for n in outputs]}}


def dense_model(units=3, in_features=4, **dense_cfg):
    cfg = dict(units=units, activation='linear', use_bias=True)
    cfg.update(dense_cfg)
    return k2_functional([k2_input('input', [in_features]), k2_layer('Dense', 'dense', ['input'], **cfg)],
                         ['input'], ['dense'])


def conv_model(**conv_cfg):
    cfg = dict(filters=2, kernel_size=[3, 3], strides=[1, 1], padding='valid',
               data_format='channels_last', dilation_rate=[1, 1], groups=1, activation='linear',
               use_bias=True)
    cfg.update(conv_cfg)
    return k2_functional([k2_input('input', [8, 8, 3]), k2_layer('Conv2D', 'conv', ['input'], **cfg)],
                         ['input'], ['conv'])


DENSE_W = {'input': [], 'dense': [('dense/kernel:0', w(4, 3)), ('dense/bias:0', w(3))]}
CONV_W = {'input': [], 'conv': [('conv/kernel:0', w(3, 3, 3, 2)), ('conv/bias:0', w(2))]}


def broken():
    expected = {}

    def add(name, substring):
        expected[name] = substring
        return os.path.join(HERE, name)

    with open(add('not_hdf5.h5', 'not an HDF5 file'), 'w') as f:
        f.write('{"class_name": "Sequential"}  this is JSON text, not HDF5\n' * 20)

    # A valid model, then cut in half.
    full = os.path.join(HERE, '_full.tmp')
    write_model(full, dense_model(units=64, in_features=64),
                {'input': [], 'dense': [('dense/kernel:0', w(64, 64)), ('dense/bias:0', w(64))]})
    data = open(full, 'rb').read()
    os.remove(full)
    with open(add('truncated.h5', 'truncated'), 'wb') as f:
        f.write(data[:len(data) // 2])

    p = add('missing_model_config.h5', "missing root attribute 'model_config'")
    with h5py.File(p, 'w') as f:
        f.attrs['keras_version'] = '2.6.0'
        f.create_group('model_weights')

    write_model(add('invalid_json.h5', 'model_config: invalid JSON'), None, DENSE_W,
                config_text='{"class_name": "Functional", "config": {"layers": [')

    m = dense_model()
    m['config']['layers'][1]['class_name'] = 'FancyLayer'
    write_model(add('unknown_layer.h5', "layer 'dense' (FancyLayer): class_name: unknown or unsupported "
                                        "layer class 'FancyLayer'"), m, DENSE_W)

    write_model(add('padding_reflect.h5', "layer 'conv' (Conv2D): padding: 'reflect' is not supported"),
                conv_model(padding='reflect'), CONV_W)
    write_model(add('channels_first.h5', "layer 'conv' (Conv2D): data_format: 'channels_first' is not "
                                         "supported"), conv_model(data_format='channels_first'), CONV_W)
    write_model(add('conv_dilation_and_stride.h5', "layer 'conv' (Conv2D): dilation_rate:"),
                conv_model(strides=[2, 2], dilation_rate=[2, 2]), CONV_W)
    write_model(add('conv_groups.h5', "layer 'conv' (Conv2D): groups: 4 does not divide filters 2"),
                conv_model(groups=4), CONV_W)

    m = k2_functional([k2_input('input', [8, 8, 3]),
                       k2_layer('UpSampling2D', 'up', ['input'], size=[2, 2], data_format='channels_last',
                                interpolation='bicubic')], ['input'], ['up'])
    write_model(add('upsampling_bicubic.h5', "layer 'up' (UpSampling2D): interpolation: 'bicubic' is not "
                                             "supported"), m, {'input': [], 'up': []})

    m = k2_functional([k2_input('input', [6, 4]),
                       k2_layer('LayerNormalization', 'ln', ['input'], axis=[-1], epsilon=1e-6, center=True,
                                scale=True, rms_scaling=True)], ['input'], ['ln'])
    write_model(add('layernorm_rms_scaling.h5', "layer 'ln' (LayerNormalization): rms_scaling:"), m,
                {'input': [], 'ln': [('ln/gamma', w(4)), ('ln/beta', w(4))]}, keras_version='3.4.1')

    write_model(add('missing_weight_dataset.h5', "layer 'dense' (Dense): kernel: weight dataset "
                                                 "'dense/kernel:0' not found in /model_weights/dense"),
                dense_model(), DENSE_W, skip_datasets=('dense/kernel:0',))

    # The kernel is an external link (it could point at any file on disk): not followed.
    p = add('external_link_weight.h5', "layer 'dense' (Dense): kernel: weight dataset 'dense/kernel:0' not "
                                       "found in /model_weights/dense")
    write_model(p, dense_model(), DENSE_W, skip_datasets=('dense/kernel:0',))
    with h5py.File(p, 'a') as f:
        f['model_weights/dense/dense/kernel:0'] = h5py.ExternalLink('truncated.h5', '/model_weights')

    write_model(add('missing_weight_name.h5', "layer 'dense' (Dense): bias: weight 'bias' is missing"),
                dense_model(), {'input': [], 'dense': [('dense/kernel:0', w(4, 3))]})

    write_model(add('missing_weight_group.h5', "layer 'dense' (Dense): weights: no weight group "
                                               "'/model_weights/dense'"), dense_model(), {'input': []})

    # Kernel shape contradicts the config (units 3, file has 5 columns).
    write_model(add('weight_shape_units.h5', "layer 'dense' (Dense): kernel: weight shape (4, 5) does not "
                                             "match the shape (?, 3)"),
                dense_model(), {'input': [], 'dense': [('dense/kernel:0', w(4, 5)), ('dense/bias:0', w(3))]})
    # Kernel shape contradicts the input (input has 4 features, kernel 7 rows): shape inference.
    write_model(add('weight_shape_input.h5', "layer 'dense' (Dense): kernel:"),
                dense_model(), {'input': [], 'dense': [('dense/kernel:0', w(7, 3)), ('dense/bias:0', w(3))]})

    write_model(add('weight_int_dtype.h5', "unsupported element type (integer"), dense_model(),
                {'input': [], 'dense': [('dense/kernel:0', np.ones((4, 3))), ('dense/bias:0', np.ones(3))]},
                dtype='<i4')

    # Graph cycle: a <- b <- a.
    m = k2_functional([k2_input('input', [4]),
                       k2_layer('Dense', 'a', ['b'], units=4, activation='relu', use_bias=False),
                       k2_layer('Dense', 'b', ['a'], units=4, activation='relu', use_bias=False)],
                      ['input'], ['b'])
    write_model(add('graph_cycle.h5', 'inbound_nodes: the model graph has a cycle'), m,
                {'input': [], 'a': [('a/kernel:0', w(4, 4))], 'b': [('b/kernel:0', w(4, 4))]})

    m = k2_functional([k2_input('input', [4]),
                       k2_layer('Dense', 'dense', ['ghost'], units=3, activation='linear', use_bias=True)],
                      ['input'], ['dense'])
    write_model(add('dangling_input.h5', "layer 'dense' (Dense): inbound_nodes: inbound layer 'ghost' does "
                                         "not exist"), m, DENSE_W)

    m = dense_model()
    m['config']['layers'][1]['inbound_nodes'] = [[['input', 3, 0, {}]]]
    write_model(add('dangling_node_index.h5', "layer 'dense' (Dense): inbound_nodes: layer 'input' has no "
                                              "call (node) 3"), m, DENSE_W)

    m = k2_functional([k2_input('input', [100000, 100000, 100000]),
                       k2_layer('Flatten', 'flatten', ['input'], data_format='channels_last')],
                      ['input'], ['flatten'])
    write_model(add('absurd_input_shape.h5', "layer 'input' (InputLayer): batch_input_shape"), m,
                {'input': [], 'flatten': []})

    write_model(add('absurd_dense_units.h5', "layer 'dense' (Dense): units: 1099511627776 exceeds the limit"),
                dense_model(units=2 ** 40), DENSE_W)

    m = k2_functional([k2_input('input', [8, 8, 3]),
                       k2_layer('Reshape', 'reshape', ['input'], target_shape=[65536, 65536, 65536])],
                      ['input'], ['reshape'])
    write_model(add('absurd_reshape.h5', "layer 'reshape' (Reshape):"), m, {'input': [], 'reshape': []})

    m = k2_functional([k2_input('input', [4]),
                       {'class_name': 'TFOpLambda', 'name': 'tf.math.cumsum',
                        'config': {'name': 'tf.math.cumsum', 'trainable': True, 'dtype': 'float32',
                                   'function': 'math.cumsum'},
                        'inbound_nodes': [['input', 0, 0, {'axis': -1, 'name': None}]]}],
                      ['input'], ['tf.math.cumsum'])
    write_model(add('tfoplambda_unsupported.h5', "layer 'tf.math.cumsum' (TFOpLambda): function: TFOpLambda "
                                                 "function 'math.cumsum' is not supported"),
                m, {'input': [], 'tf.math.cumsum': []})

    inner = k2_functional([k2_input('inner_in', [4]),
                           k2_layer('Dense', 'inner_dense', ['inner_in'], units=3, activation='linear',
                                    use_bias=True)], ['inner_in'], ['inner_dense'])
    nested = {'class_name': 'Functional', 'name': 'inner', 'config': dict(inner['config'], name='inner'),
              'inbound_nodes': [[['input', 0, 0, {}]]]}
    # Keras 2 numbers a nested Functional model's first call node 1 (node 0 is its construction);
    # this file refers to node 0.
    m = k2_functional([k2_input('input', [4]), nested], ['input'], ['inner'])
    write_model(add('nested_model.h5', "output_layers: nested model 'inner' has no call (node) 0"), m,
                {'input': [], 'inner': [('inner_dense/kernel:0', w(4, 3)), ('inner_dense/bias:0', w(3))]})

    m = k2_functional([k2_input('input', [5, 4]),
                       k2_layer('Masking', 'masking', ['input'], mask_value=0.0)], ['input'], ['masking'])
    write_model(add('masking.h5', "layer 'masking' (Masking): class_name: Masking is not supported"), m,
                {'input': [], 'masking': []})

    write_model(add('dense_lora.h5', "layer 'dense' (Dense): lora_rank: 4 is not supported"),
                dense_model(lora_rank=4), DENSE_W, keras_version='3.4.1')

    write_model(add('mixed_precision.h5', "layer 'dense' (Dense): dtype: 'mixed_float16' is not supported"),
                dense_model(dtype={'class_name': 'Policy', 'config': {'name': 'mixed_float16'}}), DENSE_W)

    write_model(add('unknown_activation.h5', "layer 'dense' (Dense): activation: activation 'crelu' is not "
                                             "supported"), dense_model(activation='crelu'), DENSE_W)

    m = dense_model()
    m['config']['layers'][0]['config']['batch_input_shape'] = [None, None]
    write_model(add('dynamic_input_shape.h5', "layer 'input' (InputLayer): batch_input_shape: dimension 1"),
                m, DENSE_W)

    write_model(add('output_missing_layer.h5', "output_layers: inbound layer 'nowhere' does not exist"),
                k2_functional(dense_model()['config']['layers'], ['input'], ['nowhere']), DENSE_W)

    with open(os.path.join(HERE, 'expected.json'), 'w') as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write('\n')


def valid():
    os.makedirs(VALID, exist_ok=True)
    expected = {}

    # Keras 2.2-style Sequential: the config is the layer list, no InputLayer, fixed-length strings
    # everywhere (including model_config), weight_names split into weight_names0/1.
    seq = {'class_name': 'Sequential', 'config': [
        {'class_name': 'Dense', 'config': {'name': 'dense_1', 'trainable': True, 'batch_input_shape': [None, 4],
                                           'dtype': 'float32', 'units': 3, 'activation': 'hard_sigmoid',
                                           'use_bias': True}},
        {'class_name': 'Activation', 'config': {'name': 'activation_1', 'trainable': True,
                                                'activation': 'softmax'}}]}
    write_model(os.path.join(VALID, 'k2_seq_list_fixed.h5'), seq,
                {'dense_1': [('dense_1/kernel:0', w(4, 3)), ('dense_1/bias:0', w(3))], 'activation_1': []},
                keras_version='2.2.4', fixed=True, fixed_root=True, chunk_weight_names=True)
    expected['k2_seq_list_fixed.h5'] = {'inputs': ['dense_1_input'], 'outputs': ['activation_1']}

    # Keras 2.3/2.4: Sequential {name, layers} with InputLayer; BatchNormalizationV1; fixed-length
    # layer_names/weight_names, variable-length root attributes (as field-boundary.h5).
    seq = {'class_name': 'Sequential', 'config': {'name': 'sequential', 'layers': [
        {'class_name': 'InputLayer', 'config': {'batch_input_shape': [None, 6, 6, 2], 'dtype': 'float32',
                                                'sparse': False, 'name': 'in'}},
        {'class_name': 'Conv2D', 'config': {'name': 'conv2d', 'filters': 4, 'kernel_size': [3, 3],
                                            'strides': [1, 1], 'padding': 'same', 'data_format': 'channels_last',
                                            'dilation_rate': [1, 1], 'activation': 'relu', 'use_bias': False}},
        {'class_name': 'BatchNormalizationV1', 'config': {'name': 'bn', 'axis': [3], 'epsilon': 0.001,
                                                          'center': False, 'scale': True}},
        {'class_name': 'GlobalAveragePooling2D', 'config': {'name': 'gap', 'data_format': 'channels_last'}}]}}
    write_model(os.path.join(VALID, 'k2_seq_dict_fixed.h5'), seq,
                {'in': [], 'conv2d': [('conv2d/kernel:0', w(3, 3, 2, 4))],
                 'bn': [('bn/gamma:0', w(4)), ('bn/moving_mean:0', w(4)), ('bn/moving_variance:0', np.ones(4))],
                 'gap': []}, keras_version='2.3.0-tf', fixed=True)
    expected['k2_seq_dict_fixed.h5'] = {'inputs': ['in'], 'outputs': ['gap']}

    # Keras 2.6 functional: a shared Dense called twice (both calls are outputs), a TFOpLambda with
    # the single-node argument structure, and single-triple input_layers / output_layers lists.
    layers = [k2_input('x', [4]),
              {'class_name': 'TFOpLambda', 'name': 'tf.nn.relu',
               'config': {'name': 'tf.nn.relu', 'trainable': True, 'dtype': 'float32', 'function': 'nn.relu'},
               'inbound_nodes': [['x', 0, 0, {'name': None}]]},
              {'class_name': 'Dense', 'name': 'shared',
               'config': {'name': 'shared', 'trainable': True, 'dtype': 'float32', 'units': 4,
                          'activation': 'tanh', 'use_bias': True},
               'inbound_nodes': [[['x', 0, 0, {}]], [['tf.nn.relu', 0, 0, {}]]]},
              k2_layer('Add', 'add', [('shared', 0), ('shared', 1)])]
    m = {'class_name': 'Functional', 'config': {'name': 'model', 'layers': layers,
                                                'input_layers': [['x', 0, 0]],
                                                'output_layers': [['shared', 0, 0], ['shared', 1, 0], ['add', 0, 0]]}}
    write_model(os.path.join(VALID, 'k2_shared_tfop.h5'), m,
                {'x': [], 'tf.nn.relu': [], 'shared': [('shared/kernel:0', w(4, 4)), ('shared/bias:0', w(4))],
                 'add': []})
    expected['k2_shared_tfop.h5'] = {'inputs': ['x'], 'outputs': ['shared', 'shared:1', 'add']}

    # Keras 3: merge layers nest their argument list, DTypePolicy objects, LeakyReLU negative_slope,
    # DepthwiseConv2D weight named `kernel`, weight names without ":0".
    def kt(layer, shape, node=0):
        return {'class_name': '__keras_tensor__',
                'config': {'shape': [None] + shape, 'dtype': 'float32', 'keras_history': [layer, node, 0]}}

    policy = {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float32'},
              'registered_name': None}

    def k3(cls, name, args, **cfg):
        c = {'name': name, 'trainable': True, 'dtype': policy}
        c.update(cfg)
        return {'module': 'keras.layers', 'class_name': cls, 'config': c, 'registered_name': None,
                'name': name, 'inbound_nodes': [{'args': args, 'kwargs': {}}]}

    layers = [
        {'module': 'keras.layers', 'class_name': 'InputLayer', 'registered_name': None, 'name': 'a',
         'config': {'batch_shape': [None, 5, 5, 3], 'dtype': 'float32', 'sparse': False, 'name': 'a'},
         'inbound_nodes': []},
        k3('DepthwiseConv2D', 'dw', [kt('a', [5, 5, 3])], kernel_size=[3, 3], strides=[1, 1], padding='same',
           data_format='channels_last', dilation_rate=[1, 1], depth_multiplier=1, activation='hard_sigmoid',
           use_bias=True),
        k3('LeakyReLU', 'leaky', [kt('dw', [5, 5, 3])], negative_slope=0.1),
        k3('Add', 'add', [[kt('a', [5, 5, 3]), kt('leaky', [5, 5, 3])]]),
        k3('Concatenate', 'concat', [[kt('add', [5, 5, 3]), kt('a', [5, 5, 3])]], axis=-1),
    ]
    m = {'module': 'keras', 'class_name': 'Functional', 'registered_name': 'Functional',
         'config': {'name': 'functional', 'trainable': True, 'layers': layers,
                    'input_layers': [['a', 0, 0]], 'output_layers': [['concat', 0, 0]]}}
    write_model(os.path.join(VALID, 'k3_merge_nesting.h5'), m,
                {'a': [], 'dw': [('dw/kernel', w(3, 3, 3, 1)), ('dw/bias', w(3))], 'leaky': [], 'add': [],
                 'concat': []}, keras_version='3.4.1')
    expected['k3_merge_nesting.h5'] = {'inputs': ['a'], 'outputs': ['concat']}

    # float64 and float16 weights are converted to float32.
    write_model(os.path.join(VALID, 'k2_float64_weights.h5'), dense_model(), DENSE_W, dtype='<f8')
    expected['k2_float64_weights.h5'] = {'inputs': ['input'], 'outputs': ['dense']}
    write_model(os.path.join(VALID, 'k2_float16_weights.h5'), dense_model(), DENSE_W, dtype='<f2')
    expected['k2_float16_weights.h5'] = {'inputs': ['input'], 'outputs': ['dense']}

    with open(os.path.join(VALID, 'valid.json'), 'w') as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write('\n')


def broken_nested():
    """Nested models whose weights are missing, misplaced or mis-shaped (added to expected.json
    after the others, so the earlier files' random weights stay as they were)."""
    path = os.path.join(HERE, 'expected.json')
    with open(path) as f:
        expected = json.load(f)
    inner = k2_functional([k2_input('inner_in', [4]),
                           k2_layer('Dense', 'inner_dense', ['inner_in'], units=3, activation='relu', use_bias=True),
                           k2_layer('Dense', 'inner_out', ['inner_dense'], units=2, activation='linear',
                                    use_bias=True)], ['inner_in'], ['inner_out'])
    nested = {'class_name': 'Functional', 'name': 'inner', 'config': dict(inner['config'], name='inner'),
              'inbound_nodes': [[['input', 0, 0, {}]]]}
    m = k2_functional([k2_input('input', [4]), nested], ['input'], ['inner'])
    m['config']['output_layers'] = [['inner', 1, 0]]  # the first call of a nested Functional model
    kernel, bias, out_kernel, out_bias = w(4, 3), w(3), w(3, 2), w(2)

    def inner_weights(*ws):
        return {'input': [], 'inner': list(ws)}

    def case(name, weights, message):
        write_model(os.path.join(HERE, name), m, weights)
        expected[name] = message

    case('nested_missing_inner_weights.h5',
         inner_weights(('inner_out/kernel:0', out_kernel), ('inner_out/bias:0', out_bias)),
         "layer 'inner/inner_dense' (Dense): weights: group '/model_weights/inner' of nested model 'inner' "
         "holds no weights of its layer 'inner_dense'")
    case('nested_inner_weight_shape.h5',
         inner_weights(('inner_dense/kernel:0', kernel.T.copy()), ('inner_dense/bias:0', bias),
                       ('inner_out/kernel:0', out_kernel), ('inner_out/bias:0', out_bias)),
         "layer 'inner/inner_dense' (Dense): kernel: weight shape")
    case('nested_missing_inner_bias.h5',
         inner_weights(('inner_dense/kernel:0', kernel),
                       ('inner_out/kernel:0', out_kernel), ('inner_out/bias:0', out_bias)),
         "layer 'inner/inner_dense' (Dense): bias")
    case('nested_ambiguous_weights.h5',
         inner_weights(('a/inner_dense/kernel:0', kernel), ('b/inner_dense/kernel:0', kernel),
                       ('inner_dense/bias:0', bias),
                       ('inner_out/kernel:0', out_kernel), ('inner_out/bias:0', out_bias)),
         "layer 'inner/inner_dense' (Dense): kernel: weights 'a/inner_dense/kernel:0' and "
         "'b/inner_dense/kernel:0' in /model_weights/inner both fit this layer")
    case('nested_no_group.h5', {'input': []},
         "layer 'inner/inner_dense' (Dense): weights: no weight group '/model_weights/inner'")
    with open(path, 'w') as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write('\n')


if __name__ == '__main__':
    broken()
    valid()
    broken_nested()
