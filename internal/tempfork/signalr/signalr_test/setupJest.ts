import 'jest-preset-typescript';
